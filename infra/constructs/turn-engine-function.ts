import { AssetHashType, DockerImage, Duration } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { bundleLambda, REPO_ROOT } from './bundle-options.ts';

export interface TurnEngineFunctionProps {
  readonly functionName: string;
  /** Repo-relative entry file. */
  readonly entry: string;
  readonly memoryMb: number;
  readonly timeoutSeconds: number;
  readonly environment: Record<string, string>;
  readonly logRetentionDays: logs.RetentionDays;
  /** `--enable-source-maps` in NODE_OPTIONS (the stage's `sourceMaps`). */
  readonly sourceMaps: boolean;
  readonly description: string;
  /** Reserved concurrency; unset leaves the function in the account's unreserved pool. */
  readonly reservedConcurrency?: number;
  /** Repo-relative folders copied beside the bundle, as `{ from: to }` (the API function's web console). */
  readonly assetDirs?: Readonly<Record<string, string>>;
}

/**
 * A function that runs turns (the API function, the cron function): Node 24 on arm64, bundled
 * with esbuild from a handler in functions/handlers/ by bundleLambda (the same build the bundle
 * benchmark measures: ESM with code splitting, which NodejsFunction's single --outfile cannot
 * produce; with STRATUS_COMPILE_CACHE_NODE set, also Node's compile cache for it, see
 * infra/constructs/compile-cache.ts), traced with X-Ray, logging to its own
 * log group with a retention. Its role starts with CloudWatch Logs only; the stack grants the
 * tables, prefixes and functions it needs one by one.
 */
export class TurnEngineFunction extends Construct {
  readonly fn: lambda.Function;
  readonly role: iam.Role;

  constructor(scope: Construct, id: string, props: TurnEngineFunctionProps) {
    super(scope, id);
    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      managedPolicies: [iam.ManagedPolicy.fromAwsManagedPolicyName('service-role/AWSLambdaBasicExecutionRole')],
    });
    this.fn = new lambda.Function(this, 'Function', {
      functionName: props.functionName,
      description: props.description,
      code: lambda.Code.fromAsset(REPO_ROOT, {
        // Hashed by what was built, as NodejsFunction does: the repository itself is never copied.
        assetHashType: AssetHashType.OUTPUT,
        bundling: {
          // Never pulled: bundling is local (esbuild is a dev dependency) and always succeeds or throws.
          image: DockerImage.fromRegistry('public.ecr.aws/sam/build-nodejs24.x'),
          local: {
            tryBundle(outputDir) {
              bundleLambda(props.entry, outputDir, props.assetDirs);
              return true;
            },
          },
        },
      }),
      handler: 'index.handler',
      runtime: lambda.Runtime.NODEJS_24_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: props.memoryMb,
      timeout: Duration.seconds(props.timeoutSeconds),
      ...(props.reservedConcurrency !== undefined ? { reservedConcurrentExecutions: props.reservedConcurrency } : {}),
      role: this.role,
      tracing: lambda.Tracing.ACTIVE,
      environment: { ...(props.sourceMaps ? { NODE_OPTIONS: '--enable-source-maps' } : {}), ...props.environment },
      logGroup: new logs.LogGroup(this, 'Logs', { retention: props.logRetentionDays }),
    });
  }
}
