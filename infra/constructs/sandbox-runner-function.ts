import { Duration, IgnoreMode, Size } from 'aws-cdk-lib';
import type * as ec2 from 'aws-cdk-lib/aws-ec2';
import { Platform } from 'aws-cdk-lib/aws-ecr-assets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from './bundle-options.ts';

export interface SandboxRunnerFunctionProps {
  readonly functionName: string;
  /** Repo-relative Dockerfile; the build context is the repo root. */
  readonly dockerfile: string;
  readonly memoryMb: number;
  /** @default 10240 */
  readonly ephemeralStorageMb?: number;
  readonly timeoutSeconds: number;
  /** Reserved concurrency; unset leaves the function in the account's unreserved pool. */
  readonly reservedConcurrency?: number;
  readonly logRetentionDays: logs.RetentionDays;
  /** The VPC placement that denies commands the network (RunnerNetwork). */
  readonly network: { vpc: ec2.IVpc; subnets: ec2.SubnetSelection; securityGroup: ec2.ISecurityGroup };
}

/**
 * Files the runner image may see: the sources it runs and the lockfile it installs from.
 * Everything else (node_modules, cdk.out, data folders) stays out of the build context and out
 * of the asset hash.
 */
const IMAGE_CONTEXT = ['*', '!package.json', '!package-lock.json', '!tsconfig.json', '!sandbox-runner', '!functions'];

/**
 * The runner image as function code. The git function (git-function.ts) is built from the same
 * arguments, so both functions share one image asset (one build, one ECR image).
 */
export function runnerImageCode(dockerfile: string): lambda.DockerImageCode {
  return lambda.DockerImageCode.fromImageAsset(REPO_ROOT, {
    file: dockerfile,
    platform: Platform.LINUX_ARM64,
    exclude: IMAGE_CONTEXT,
    ignoreMode: IgnoreMode.DOCKER,
  });
}

/**
 * The sandbox runner: a container-image function built from the runner's Dockerfile, arm64,
 * with large ephemeral storage for warm workspace copies, in isolated VPC subnets (no internet).
 * Its role can write its logs and manage the function's network interfaces, nothing else: no
 * S3, no tables. Workspace access arrives with each request.
 *
 * Tenant isolation mode (PER_TENANT): every invoke names a tenant id (the workspace id,
 * functions/runner-client/runner-tenant.ts) and Lambda never lets an execution environment
 * serve two tenant ids, so nothing a command leaves running can meet another workspace. The
 * mode is fixed when the function is created (changing it replaces the function) and rules out
 * Function URLs, provisioned concurrency and SnapStart; the runner uses none of them.
 */
export class SandboxRunnerFunction extends Construct {
  readonly fn: lambda.DockerImageFunction;
  readonly role: iam.Role;

  constructor(scope: Construct, id: string, props: SandboxRunnerFunctionProps) {
    super(scope, id);
    if (!existsSync(path.join(REPO_ROOT, props.dockerfile))) {
      throw new Error(`The sandbox runner image needs ${props.dockerfile} (relative to ${REPO_ROOT}); it does not exist.`);
    }
    const storage = props.ephemeralStorageMb ?? 10_240;
    if (storage < 512 || storage > 10_240) throw new Error(`ephemeralStorageMb must be 512–10240, got ${storage}.`);
    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      managedPolicies: [
        iam.ManagedPolicy.fromAwsManagedPolicyName('service-role/AWSLambdaBasicExecutionRole'),
        // Lambda creates the function's network interfaces in the VPC with its execution role.
        iam.ManagedPolicy.fromAwsManagedPolicyName('service-role/AWSLambdaVPCAccessExecutionRole'),
      ],
    });
    this.fn = new lambda.DockerImageFunction(this, 'Function', {
      functionName: props.functionName,
      description: 'Stratus sandbox runner: runs one tool operation against a workspace synced with S3.',
      code: runnerImageCode(props.dockerfile),
      architecture: lambda.Architecture.ARM_64,
      memorySize: props.memoryMb,
      ...(props.reservedConcurrency !== undefined ? { reservedConcurrentExecutions: props.reservedConcurrency } : {}),
      ephemeralStorageSize: Size.mebibytes(storage),
      timeout: Duration.seconds(props.timeoutSeconds),
      role: this.role,
      vpc: props.network.vpc,
      vpcSubnets: props.network.subnets,
      securityGroups: [props.network.securityGroup],
      logGroup: new logs.LogGroup(this, 'Logs', { retention: props.logRetentionDays }),
      tenancyConfig: lambda.TenancyConfig.PER_TENANT,
      // Traced like the turn functions: a turn's trace shows the runner calls it waited on.
      tracing: lambda.Tracing.ACTIVE,
    });
  }
}
