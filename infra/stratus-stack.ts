import { ArnFormat, CfnOutput, Duration, Stack, type StackProps } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { ENTRIES } from './constructs/bundle-options.ts';
import { BUCKET_LAYOUT } from '../functions/stores/bucket-layout.ts';
import { tableEnvironment } from '../functions/stores/tables.ts';
import type { StageConfig } from './config/stages.ts';
import { StratusAlarms } from './constructs/alarms.ts';
import { StratusDashboard } from './constructs/dashboard.ts';
import { AppSecrets } from './constructs/app-secrets.ts';
import { bedrockInvokeStatements } from './constructs/bedrock-access.ts';
import { DataStores } from './constructs/data-stores.ts';
import { EgressProxy } from './constructs/egress-proxy.ts';
import { RunnerNetwork } from './constructs/runner-network.ts';
import { SandboxRunnerFunction } from './constructs/sandbox-runner-function.ts';
import { Schedules } from './constructs/schedules.ts';
import { TurnEngineFunction } from './constructs/turn-engine-function.ts';
import { WorkspaceAccessRole } from './constructs/workspace-access-role.ts';
import { acknowledgeNagFindings } from './nag-acknowledgements.ts';

/** The CloudWatch namespace of every Stratus metric; stages are told apart by the `stage` dimension. */
export const METRICS_NAMESPACE = 'Stratus';

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
  readonly schedules: Schedules;
  readonly workspaceAccess: WorkspaceAccessRole;
  readonly functionUrl: lambda.FunctionUrl;
  readonly network: RunnerNetwork;
  /** Present when the stage enables `network.egressProxy`. */
  readonly egressProxy?: EgressProxy;
  /** The Bedrock model and profile ids the turn functions may invoke (empty with the Anthropic API). */
  readonly bedrockModels: readonly string[];
  readonly alarms: StratusAlarms;
  readonly dashboard: StratusDashboard;


  constructor(scope: Construct, id: string, props: StratusStackProps) {
    super(scope, id, props);
    const { stage } = props;
    const retention = stage.logRetentionDays as logs.RetentionDays;
    this.bedrockModels = stage.model.provider === 'bedrock' ? [stage.model.name, ...(stage.model.fallback ? [stage.model.fallback] : [])] : [];
    this.data = new DataStores(this, 'Data', { stage });
    this.secrets = new AppSecrets(this, 'Secrets', { stage });

    const { bucket } = this.data;
    this.network = new RunnerNetwork(this, 'Network', {
      bucket,
      publicSubnets: stage.network.egressProxy,
      maxAzs: stage.network.maxAzs,
      logRetentionDays: retention,
    });
    this.runner = new SandboxRunnerFunction(this, 'Runner', {
      // A new name for the tenant-isolated runner: its tenancy mode can only be set when a
      // function is created, and CloudFormation cannot replace a resource under the same name.
      functionName: `${stage.prefix}-tenant-runner`,
      dockerfile: stage.runner.dockerfile,
      memoryMb: stage.runner.memoryMb,
      reservedConcurrency: stage.runner.reservedConcurrency,
      ephemeralStorageMb: stage.runner.ephemeralStorageMb,
      timeoutSeconds: stage.runner.timeoutSeconds,
      logRetentionDays: retention,
      network: { vpc: this.network.vpc, subnets: this.network.runnerSubnets, securityGroup: this.network.runnerSecurityGroup },
    });
    if (stage.network.egressProxy) {
      this.egressProxy = new EgressProxy(this, 'EgressProxy', {
        prefix: stage.prefix,
        vpc: this.network.vpc,
        runnerSecurityGroup: this.network.runnerSecurityGroup,
        dockerfile: stage.network.egressProxyDockerfile,
        logRetentionDays: retention,
        protectData: stage.protectData,
      });
      this.runner.fn.addEnvironment('STRATUS_EGRESS', 'proxy');
      this.runner.fn.addEnvironment('STRATUS_EGRESS_PROXY', this.egressProxy.url);
    } else {
      this.runner.fn.addEnvironment('STRATUS_EGRESS', 'none');
    }

    const apiFunctionName = `${stage.prefix}-api`;
    const baseEnv: Record<string, string> = {
      ...tableEnvironment(this.data.tableNames),
      // Long turns (from the API or a schedule) continue in an async invocation of the API function.
      STRATUS_SELF_FUNCTION: apiFunctionName,
      STRATUS_BUCKET: bucket.bucketName,
      STRATUS_RUNNER_FUNCTION: this.runner.fn.functionName,
      STRATUS_MODEL_PROVIDER: stage.model.provider,
      STRATUS_MODEL: stage.model.name,
      ...(stage.model.fallback ? { STRATUS_FALLBACK_MODEL: stage.model.fallback } : {}),
      STRATUS_LOG_LEVEL: stage.logLevel,
      // Powertools: logs, EMF metrics in one namespace with a stage dimension, X-Ray subsegments.
      STRATUS_STAGE: stage.name,
      POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
      POWERTOOLS_LOGGER_SAMPLE_RATE: String(stage.logSampleRate),
      POWERTOOLS_TRACE_ENABLED: 'true',
      ...(this.secrets.anthropicApiKey ? { STRATUS_ANTHROPIC_KEY_SECRET: this.secrets.anthropicApiKey.secretArn } : {}),
      STRATUS_API_TOKENS_SECRET: this.secrets.apiTokens.secretArn,
      STRATUS_EGRESS: this.egressProxy ? 'proxy' : 'none',
      ...(this.egressProxy ? { STRATUS_EGRESS_KEY_SECRET: this.egressProxy.tokenKey.secretArn } : {}),
    };

    this.cron = new TurnEngineFunction(this, 'Cron', {
      functionName: `${stage.prefix}-cron`,
      description: 'Stratus cron: runs the turn a Scheduler schedule asks for.',
      entry: ENTRIES.cron,
      memoryMb: stage.api.memoryMb,
      timeoutSeconds: stage.cron.timeoutSeconds,
      reservedConcurrency: stage.cron.reservedConcurrency,
      environment: { ...baseEnv, POWERTOOLS_SERVICE_NAME: 'stratus-cron' },
      logRetentionDays: retention,
    });
    this.schedules = new Schedules(this, 'Schedules', { groupName: stage.prefix, cronFunction: this.cron.fn });

    this.api = new TurnEngineFunction(this, 'Api', {
      functionName: apiFunctionName,
      description: 'Stratus API: the Hono app behind a streaming Function URL; runs turns.',
      entry: ENTRIES.api,
      memoryMb: stage.api.memoryMb,
      timeoutSeconds: stage.api.timeoutSeconds,
      reservedConcurrency: stage.api.reservedConcurrency,
      environment: {
        ...baseEnv,
        POWERTOOLS_SERVICE_NAME: 'stratus-api',
        ...(this.secrets.githubAppPrivateKey ? { STRATUS_GITHUB_APP_KEY_SECRET: this.secrets.githubAppPrivateKey.secretArn } : {}),
        ...(this.secrets.githubWebhookSecret ? { STRATUS_GITHUB_WEBHOOK_SECRET: this.secrets.githubWebhookSecret.secretArn } : {}),
        STRATUS_SCHEDULE_GROUP: this.schedules.group.scheduleGroupName,
        STRATUS_SCHEDULER_ROLE_ARN: this.schedules.schedulerRole.roleArn,
        STRATUS_CRON_FUNCTION_ARN: this.cron.fn.functionArn,
      },
      logRetentionDays: retention,
    });
    // A continuation that fails is not retried blindly: the lease expires and the next turn repairs the log.
    this.api.fn.configureAsyncInvoke({ retryAttempts: 0 });

    this.workspaceAccess = new WorkspaceAccessRole(this, 'WorkspaceAccess', {
      bucket,
      roleName: `${stage.prefix}-workspace-access`,
      trustedBy: [this.api.role, this.cron.role],
    });

    for (const engine of [this.api, this.cron]) {
      engine.fn.addEnvironment('STRATUS_WORKSPACE_ROLE_ARN', this.workspaceAccess.role.roleArn);
      const role = engine.role;
      for (const table of Object.values(this.data.tables)) table.grantReadWriteData(role);
      role.addToPrincipalPolicy(
        new iam.PolicyStatement({
          actions: ['s3:GetObject', 's3:PutObject'],
          resources: [bucket.arnForObjects(`${BUCKET_LAYOUT.toolResults}*`), bucket.arnForObjects(`${BUCKET_LAYOUT.spill}*`)],
        }),
      );
      role.addToPrincipalPolicy(
        new iam.PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [this.runner.fn.functionArn] }),
      );
      this.secrets.anthropicApiKey?.grantRead(role);
      if (this.bedrockModels.length > 0) {
        for (const statement of bedrockInvokeStatements(this, this.bedrockModels)) role.addToPrincipalPolicy(statement);
      }
      this.secrets.apiTokens.grantRead(role);
      this.egressProxy?.tokenKey.grantRead(role);
    }
    this.secrets.githubAppPrivateKey?.grantRead(this.api.role);
    this.secrets.githubWebhookSecret?.grantRead(this.api.role);
    this.schedules.allowManageBy(this.api.role);
    // Long turns continue in an async invocation of the API function, from the API itself or
    // from a scheduled turn in the cron function. The ARN is built from the name: referencing
    // the function from its own role's policy would be a circular dependency.
    const continuationTarget = new iam.PolicyStatement({
      actions: ['lambda:InvokeFunction'],
      resources: [this.formatArn({ service: 'lambda', resource: 'function', resourceName: apiFunctionName, arnFormat: ArnFormat.COLON_RESOURCE_NAME })],
    });
    this.api.role.addToPrincipalPolicy(continuationTarget);
    this.cron.role.addToPrincipalPolicy(continuationTarget);

    this.functionUrl = this.api.fn.addFunctionUrl({
      // The app authenticates every request with bearer tokens; IAM auth would shut out plain HTTP clients.
      authType: lambda.FunctionUrlAuthType.NONE,
      invokeMode: lambda.InvokeMode.RESPONSE_STREAM,
      ...(stage.api.corsOrigins?.length ? { cors: corsFor(stage.api.corsOrigins) } : {}),
    });

    const functions = { api: this.api.fn, cron: this.cron.fn, runner: this.runner.fn };
    this.alarms = new StratusAlarms(this, 'Alarms', { prefix: stage.prefix, functions, scheduleGroup: this.schedules.group });
    this.dashboard = new StratusDashboard(this, 'Dashboard', {
      prefix: stage.prefix,
      namespace: METRICS_NAMESPACE,
      stage: stage.name,
      turnServices: ['stratus-api', 'stratus-cron'],
      functions,
      price: stage.modelPrice,
    });

    new CfnOutput(this, 'ApiUrl', { value: this.functionUrl.url });
    new CfnOutput(this, 'AlarmTopic', { value: this.alarms.topic.topicArn });
    new CfnOutput(this, 'BucketName', { value: bucket.bucketName });
    new CfnOutput(this, 'ApiTokensSecret', { value: this.secrets.apiTokens.secretName });
    if (this.secrets.anthropicApiKey) new CfnOutput(this, 'AnthropicKeySecret', { value: this.secrets.anthropicApiKey.secretName });

    acknowledgeNagFindings(this);
  }
}

/** The Function URL's CORS answer for the stage's origins: the methods and headers the API uses. */
function corsFor(origins: readonly string[]): lambda.FunctionUrlCorsOptions {
  return {
    allowedOrigins: [...origins],
    allowedMethods: [lambda.HttpMethod.ALL],
    allowedHeaders: ['authorization', 'content-type', 'accept', 'last-event-id'],
    exposedHeaders: ['retry-after'],
    maxAge: Duration.hours(1),
  };
}
