import { Duration } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import path from 'node:path';
import { BUNDLE_ASSETS, LAMBDA_BUNDLE, REPO_ROOT } from './bundle-options.ts';

export interface TurnEngineFunctionProps {
  readonly functionName: string;
  /** Repo-relative entry file. */
  readonly entry: string;
  readonly memoryMb: number;
  readonly timeoutSeconds: number;
  readonly environment: Record<string, string>;
  readonly logRetentionDays: logs.RetentionDays;
  readonly description: string;
  /** Folders copied beside the bundle, repo-relative → name there (the API function's built console). */
  readonly assetDirs?: Record<string, string>;
  /** Reserved concurrency; unset leaves the function in the account's unreserved pool. */
  readonly reservedConcurrency?: number;
}

/**
 * A function that runs turns (the API function, the cron function): Node 24 on arm64, bundled
 * with esbuild from a handler in functions/handlers/, traced with X-Ray, logging to its own
 * log group with a retention. Its role starts with CloudWatch Logs only; the stack grants the
 * tables, prefixes and functions it needs one by one.
 */
export class TurnEngineFunction extends Construct {
  readonly fn: NodejsFunction;
  readonly role: iam.Role;

  constructor(scope: Construct, id: string, props: TurnEngineFunctionProps) {
    super(scope, id);
    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      managedPolicies: [iam.ManagedPolicy.fromAwsManagedPolicyName('service-role/AWSLambdaBasicExecutionRole')],
    });
    this.fn = new NodejsFunction(this, 'Function', {
      functionName: props.functionName,
      description: props.description,
      entry: path.join(REPO_ROOT, props.entry),
      handler: 'handler',
      runtime: lambda.Runtime.NODEJS_24_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: props.memoryMb,
      timeout: Duration.seconds(props.timeoutSeconds),
      ...(props.reservedConcurrency !== undefined ? { reservedConcurrentExecutions: props.reservedConcurrency } : {}),
      role: this.role,
      tracing: lambda.Tracing.ACTIVE,
      environment: { NODE_OPTIONS: '--enable-source-maps', ...props.environment },
      logGroup: new logs.LogGroup(this, 'Logs', { retention: props.logRetentionDays }),
      projectRoot: REPO_ROOT,
      depsLockFilePath: path.join(REPO_ROOT, 'package-lock.json'),
      bundling: {
        format: OutputFormat.ESM,
        target: LAMBDA_BUNDLE.target,
        minify: LAMBDA_BUNDLE.minify,
        sourceMap: LAMBDA_BUNDLE.sourcemap,
        sourcesContent: LAMBDA_BUNDLE.sourcesContent,
        mainFields: [...LAMBDA_BUNDLE.mainFields],
        banner: LAMBDA_BUNDLE.banner,
        externalModules: [...LAMBDA_BUNDLE.external],
        commandHooks: {
          beforeBundling: () => [],
          beforeInstall: () => [],
          afterBundling: (inputDir, outputDir) => [
            ...BUNDLE_ASSETS.map((asset) => `cp "${inputDir}/${asset}" "${outputDir}/"`),
            ...Object.entries(props.assetDirs ?? {}).map(([from, to]) => `cp -R "${inputDir}/${from}" "${outputDir}/${to}"`),
          ],
        },
      },
    });
  }
}
