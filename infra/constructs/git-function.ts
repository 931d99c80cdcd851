import { Duration, Size } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { runnerImageCode } from './sandbox-runner-function.ts';

export interface GitFunctionProps {
  readonly functionName: string;
  /** The runner's Dockerfile: the git function runs the same image. */
  readonly dockerfile: string;
  readonly memoryMb: number;
  readonly ephemeralStorageMb: number;
  readonly timeoutSeconds: number;
  readonly logRetentionDays: logs.RetentionDays;
}

/**
 * The git function: GitHub runs' clone and push at no idle cost, without a NAT gateway or an
 * egress proxy (docs/security.md, "Git and registry traffic at $0 idle"). It is the runner image
 * with STRATUS_RUNNER_OPS=git, so it answers only the harness's git_checkout and git_publish
 * (sandbox-runner/common/runner-ops-scope.ts) and never runs a command; it is placed outside
 * any VPC, where Lambda gives a function the internet, and its git goes through the runner's
 * own allow-list proxy admitting only the clone URL's host:port (STRATUS_EGRESS=direct). It
 * exchanges the repository with the sandbox runner through the workspace in S3, with the
 * per-workspace credentials each request carries. The GitHub token arrives in the request from
 * the GitHub worker and exists only in that git's environment; this function's role reads no
 * secret, no table and no object: logs only.
 *
 * Tenant isolation as for the runner: each workspace's git tenant id (`<workspace>:git`) gets
 * environments of its own, so a hostile repository that exploited git could meet no other
 * workspace.
 */
export class GitFunction extends Construct {
  readonly fn: lambda.DockerImageFunction;
  readonly role: iam.Role;

  constructor(scope: Construct, id: string, props: GitFunctionProps) {
    super(scope, id);
    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      managedPolicies: [iam.ManagedPolicy.fromAwsManagedPolicyName('service-role/AWSLambdaBasicExecutionRole')],
    });
    this.fn = new lambda.DockerImageFunction(this, 'Function', {
      functionName: props.functionName,
      description: "Stratus git: clones and pushes GitHub runs' repositories (harness git only, no commands), outside the runner VPC.",
      code: runnerImageCode(props.dockerfile),
      architecture: lambda.Architecture.ARM_64,
      memorySize: props.memoryMb,
      ephemeralStorageSize: Size.mebibytes(props.ephemeralStorageMb),
      timeout: Duration.seconds(props.timeoutSeconds),
      role: this.role,
      environment: { STRATUS_RUNNER_OPS: 'git', STRATUS_EGRESS: 'direct', STRATUS_SANDBOX: 'process' },
      logGroup: new logs.LogGroup(this, 'Logs', { retention: props.logRetentionDays }),
      tenancyConfig: lambda.TenancyConfig.PER_TENANT,
    });
  }
}
