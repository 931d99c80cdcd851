import { ArnFormat, CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { ENTRIES } from './constructs/bundle-options.ts';
import { BUCKET_LAYOUT } from '../functions/stores/bucket-layout.ts';
import { tableEnvironment } from '../functions/stores/tables.ts';
import type { StageConfig } from './config/stages.ts';
import { StratusAlarms } from './constructs/alarms.ts';
import { AppSecrets } from './constructs/app-secrets.ts';
import { DataStores } from './constructs/data-stores.ts';
import { EgressProxy } from './constructs/egress-proxy.ts';
import { RunnerNetwork } from './constructs/runner-network.ts';
import { SandboxRunnerFunction } from './constructs/sandbox-runner-function.ts';
import { Schedules } from './constructs/schedules.ts';
import { TurnEngineFunction } from './constructs/turn-engine-function.ts';
import { WorkspaceAccessRole } from './constructs/workspace-access-role.ts';
import { acknowledgeNagFindings } from './nag-acknowledgements.ts';

export interface StratusStackProps extends StackProps {
  readonly stage: StageConfig;
}

/**
 * Stratus in one stack: the API function behind a streaming Function URL, the cron function
 * EventBridge Scheduler calls, the sandbox runner image in a VPC without internet (and, if the
 * stage asks, the egress proxy), the tables, the bucket and the secrets. Each role gets its own tables, prefixes and functions, named one by one.
 */
export class StratusStack extends Stack {
  readonly data: DataStores;
  readonly secrets: AppSecrets;
  readonly runner: SandboxRunnerFunction;
  readonly api: TurnEngineFunction;
  readonly cron: TurnEngineFunction;
  /** Runs the GitHub triggers the webhook route accepts (invoked asynchronously by the API function). */
  readonly githubWorker: TurnEngineFunction;
  readonly schedules: Schedules;
  readonly workspaceAccess: WorkspaceAccessRole;
  readonly functionUrl: lambda.FunctionUrl;
  readonly network: RunnerNetwork;
  /** Present when the stage enables `network.egressProxy`. */
  readonly egressProxy?: EgressProxy;

  private readonly stage: StageConfig;

  constructor(scope: Construct, id: string, props: StratusStackProps) {
    super(scope, id, props);
    const { stage } = props;
    this.stage = stage;
    const retention = stage.logRetentionDays as logs.RetentionDays;
    this.data = new DataStores(this, 'Data', { stage });
    this.secrets = new AppSecrets(this, 'Secrets', { stage });
    this.network = new RunnerNetwork(this, 'Network', {
      bucket: this.data.bucket,
      publicSubnets: stage.network.egressProxy,
      maxAzs: stage.network.maxAzs,
      logRetentionDays: retention,
    });
    this.runner = this.runnerFunction(stage, retention);
    this.egressProxy = this.egress(stage, retention);

    const apiFunctionName = `${stage.prefix}-api`;
    const baseEnv = this.engineEnvironment(stage, apiFunctionName);
    this.cron = new TurnEngineFunction(this, 'Cron', {
      functionName: `${stage.prefix}-cron`,
      description: 'Stratus cron: runs the turn a Scheduler schedule asks for.',
      entry: ENTRIES.cron,
      memoryMb: stage.api.memoryMb,
      timeoutSeconds: stage.cron.timeoutSeconds,
      environment: baseEnv,
      logRetentionDays: retention,
    });
    this.schedules = new Schedules(this, 'Schedules', { groupName: stage.prefix, cronFunction: this.cron.fn });
    this.api = this.apiFunction(stage, apiFunctionName, baseEnv, retention);
    this.githubWorker = this.githubWorkerFunction(stage, baseEnv, retention);
    this.workspaceAccess = new WorkspaceAccessRole(this, 'WorkspaceAccess', {
      bucket: this.data.bucket,
      roleName: `${stage.prefix}-workspace-access`,
      trustedBy: [this.api.role, this.cron.role, this.githubWorker.role],
    });
    this.grantEngines(apiFunctionName);

    this.functionUrl = this.api.fn.addFunctionUrl({
      // The app authenticates every request with bearer tokens; IAM auth would shut out plain HTTP clients.
      authType: lambda.FunctionUrlAuthType.NONE,
      invokeMode: lambda.InvokeMode.RESPONSE_STREAM,
    });
    new StratusAlarms(this, 'Alarms', {
      prefix: stage.prefix,
      functions: { api: this.api.fn, cron: this.cron.fn, runner: this.runner.fn, githubWorker: this.githubWorker.fn },
      scheduleGroup: this.schedules.group,
    });
    this.outputs();
    acknowledgeNagFindings(this);
  }

  /** What an operator needs after a deploy: the API URL, the bucket, and the secrets to fill in. */
  private outputs(): void {
    new CfnOutput(this, 'ApiUrl', { value: this.functionUrl.url });
    new CfnOutput(this, 'BucketName', { value: this.data.bucket.bucketName });
    new CfnOutput(this, 'ApiTokensSecret', { value: this.secrets.apiTokens.secretName });
    new CfnOutput(this, 'AnthropicKeySecret', { value: this.secrets.anthropicApiKey.secretName });
  }

  private runnerFunction(stage: StageConfig, retention: logs.RetentionDays): SandboxRunnerFunction {
    return new SandboxRunnerFunction(this, 'Runner', {
      // A new name for the tenant-isolated runner: its tenancy mode can only be set when a
      // function is created, and CloudFormation cannot replace a resource under the same name.
      functionName: `${stage.prefix}-tenant-runner`,
      dockerfile: stage.runner.dockerfile,
      memoryMb: stage.runner.memoryMb,
      ephemeralStorageMb: stage.runner.ephemeralStorageMb,
      timeoutSeconds: stage.runner.timeoutSeconds,
      logRetentionDays: retention,
      network: { vpc: this.network.vpc, subnets: this.network.runnerSubnets, securityGroup: this.network.runnerSecurityGroup },
    });
  }

  /** The egress proxy when the stage enables it; the runner learns which way its commands reach the network. */
  private egress(stage: StageConfig, retention: logs.RetentionDays): EgressProxy | undefined {
    if (!stage.network.egressProxy) {
      this.runner.fn.addEnvironment('STRATUS_EGRESS', 'none');
      return undefined;
    }
    const proxy = new EgressProxy(this, 'EgressProxy', {
      prefix: stage.prefix,
      vpc: this.network.vpc,
      runnerSecurityGroup: this.network.runnerSecurityGroup,
      dockerfile: stage.network.egressProxyDockerfile,
      logRetentionDays: retention,
      protectData: stage.protectData,
    });
    this.runner.fn.addEnvironment('STRATUS_EGRESS', 'proxy');
    this.runner.fn.addEnvironment('STRATUS_EGRESS_PROXY', proxy.url);
    return proxy;
  }

  /** What both turn engines (API and cron) are told. */
  private engineEnvironment(stage: StageConfig, apiFunctionName: string): Record<string, string> {
    return {
      ...tableEnvironment(this.data.tableNames),
      // Long turns (from the API or a schedule) continue in an async invocation of the API function.
      STRATUS_SELF_FUNCTION: apiFunctionName,
      STRATUS_BUCKET: this.data.bucket.bucketName,
      STRATUS_RUNNER_FUNCTION: this.runner.fn.functionName,
      STRATUS_MODEL: stage.model,
      STRATUS_LOG_LEVEL: stage.logLevel,
      STRATUS_ANTHROPIC_KEY_SECRET: this.secrets.anthropicApiKey.secretArn,
      STRATUS_API_TOKENS_SECRET: this.secrets.apiTokens.secretArn,
      STRATUS_EGRESS: this.egressProxy ? 'proxy' : 'none',
      ...(this.egressProxy ? { STRATUS_EGRESS_KEY_SECRET: this.egressProxy.tokenKey.secretArn } : {}),
    };
  }

  private apiFunction(stage: StageConfig, functionName: string, baseEnv: Record<string, string>, retention: logs.RetentionDays): TurnEngineFunction {
    const api = new TurnEngineFunction(this, 'Api', {
      functionName,
      description: 'Stratus API: the Hono app behind a streaming Function URL; runs turns.',
      entry: ENTRIES.api,
      memoryMb: stage.api.memoryMb,
      timeoutSeconds: stage.api.timeoutSeconds,
      environment: {
        ...baseEnv,
        // The API verifies webhooks and hands them on; only the worker reads the App's private key.
        STRATUS_GITHUB_WEBHOOK_SECRET_ARN: this.secrets.githubWebhookSecret.secretArn,
        STRATUS_GITHUB_WORKER_FUNCTION: githubWorkerName(stage),
        STRATUS_SCHEDULE_GROUP: this.schedules.group.scheduleGroupName,
        STRATUS_SCHEDULER_ROLE_ARN: this.schedules.schedulerRole.roleArn,
        STRATUS_CRON_FUNCTION_ARN: this.cron.fn.functionArn,
      },
      logRetentionDays: retention,
    });
    // A continuation that fails is not retried blindly: the lease expires and the next turn repairs the log.
    api.fn.configureAsyncInvoke({ retryAttempts: 0 });
    return api;
  }

  private githubWorkerFunction(stage: StageConfig, baseEnv: Record<string, string>, retention: logs.RetentionDays): TurnEngineFunction {
    const githubAppId = (this.node.tryGetContext('githubAppId') as string | undefined) ?? stage.github.appId;
    const worker = new TurnEngineFunction(this, 'GithubWorker', {
      functionName: githubWorkerName(stage),
      description: 'Stratus GitHub worker: runs an accepted webhook trigger to a pull request or an explaining comment.',
      entry: ENTRIES.githubWorker,
      memoryMb: stage.api.memoryMb,
      timeoutSeconds: stage.github.workerTimeoutSeconds,
      environment: {
        ...baseEnv,
        STRATUS_GITHUB_APP_KEY_SECRET: this.secrets.githubAppPrivateKey.secretArn,
        ...(githubAppId ? { STRATUS_GITHUB_APP_ID: githubAppId } : {}),
        ...(stage.github.apiUrl ? { STRATUS_GITHUB_API_URL: stage.github.apiUrl } : {}),
      },
      logRetentionDays: retention,
    });
    // A run is not retried blindly (it may have pushed or commented): the delivery is recorded, and the hold expires.
    worker.fn.configureAsyncInvoke({ retryAttempts: 0 });
    return worker;
  }

  /** The engines' access: tables, their S3 prefixes, the runner, the secrets, and their own continuations. */
  private grantEngines(apiFunctionName: string): void {
    const bucket = this.data.bucket;
    for (const engine of [this.api, this.cron, this.githubWorker]) {
      engine.fn.addEnvironment('STRATUS_WORKSPACE_ROLE_ARN', this.workspaceAccess.role.roleArn);
      const role = engine.role;
      for (const table of Object.values(this.data.tables)) table.grantReadWriteData(role);
      role.addToPrincipalPolicy(
        new iam.PolicyStatement({
          actions: ['s3:GetObject', 's3:PutObject'],
          resources: [bucket.arnForObjects(`${BUCKET_LAYOUT.toolResults}*`), bucket.arnForObjects(`${BUCKET_LAYOUT.spill}*`)],
        }),
      );
      role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [this.runner.fn.functionArn] }));
      this.secrets.anthropicApiKey.grantRead(role);
      this.secrets.apiTokens.grantRead(role);
      this.egressProxy?.tokenKey.grantRead(role);
    }
    this.secrets.githubWebhookSecret.grantRead(this.api.role);
    this.secrets.githubAppPrivateKey.grantRead(this.githubWorker.role);
    // The webhook route hands accepted deliveries to the worker (an asynchronous invoke).
    this.api.role.addToPrincipalPolicy(
      new iam.PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [this.functionArnFromName(githubWorkerName(this.stage))] }),
    );
    this.schedules.allowManageBy(this.api.role);
    // Long turns continue in an async invocation of the API function, from the API itself or
    // from a scheduled turn in the cron function. The ARN is built from the name: referencing
    // the function from its own role's policy would be a circular dependency.
    const continuationTarget = new iam.PolicyStatement({
      actions: ['lambda:InvokeFunction'],
      resources: [this.functionArnFromName(apiFunctionName)],
    });
    this.api.role.addToPrincipalPolicy(continuationTarget);
    this.cron.role.addToPrincipalPolicy(continuationTarget);
    this.githubWorker.role.addToPrincipalPolicy(continuationTarget);
  }

  /** A function's ARN built from its name (a role's policy cannot reference its own function: a cycle). */
  private functionArnFromName(name: string): string {
    return this.formatArn({ service: 'lambda', resource: 'function', resourceName: name, arnFormat: ArnFormat.COLON_RESOURCE_NAME });
  }
}

function githubWorkerName(stage: StageConfig): string {
  return `${stage.prefix}-github-worker`;
}
