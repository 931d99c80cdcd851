import { ArnFormat, CfnOutput, Duration, Stack, type StackProps } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { CONSOLE_BUILD_DIR, ENTRIES } from './constructs/bundle-options.ts';
import { BUCKET_LAYOUT } from '../functions/stores/bucket-layout.ts';
import { TABLE_KEYS, TABLES, tableEnvironment } from '../functions/stores/tables.ts';
import type { StageConfig } from './config/stages.ts';
import { StratusAlarms } from './constructs/alarms.ts';
import { StratusDashboard } from './constructs/dashboard.ts';
import { AppSecrets } from './constructs/app-secrets.ts';
import { bedrockInvokeStatements } from './constructs/bedrock-access.ts';
import { CustomDomain } from './constructs/custom-domain.ts';
import { DataStores } from './constructs/data-stores.ts';
import { WEBHOOK_ALIAS } from '../functions/handlers/webhook-alias.ts';
import { EgressProxy } from './constructs/egress-proxy.ts';
import { GitFunction } from './constructs/git-function.ts';
import { EgressForwarderFunction } from './constructs/egress-forwarder-function.ts';
import { EGRESS_GRANTS_PREFIX } from '../sandbox-runner/common/egress-mailbox.ts';
import { RunnerNetwork } from './constructs/runner-network.ts';
import { SandboxRunnerFunction } from './constructs/sandbox-runner-function.ts';
import { Schedules } from './constructs/schedules.ts';
import { TurnEngineFunction } from './constructs/turn-engine-function.ts';
import { WorkspaceAccessRole } from './constructs/workspace-access-role.ts';
import { SessionPurgeRole } from './constructs/session-purge-role.ts';
import { AsyncFailures } from './constructs/async-failures.ts';
import { acknowledgeNagFindings } from './nag-acknowledgements.ts';
import { tracesEnvironment } from './config/traces-context.ts';

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
  /**
   * Runs the GitHub triggers the webhook route accepts (invoked asynchronously by the API
   * function). Present only when the stage turns `githubApp` on.
   */
  readonly githubWorker?: TurnEngineFunction;
  /**
   * GitHub runs' clone and push, outside the runner's VPC (constructs/git-function.ts). Present
   * only when the stage turns `githubApp` on; only the GitHub worker may invoke it.
   */
  readonly gitFunction?: GitFunction;
  readonly schedules: Schedules;
  readonly workspaceAccess: WorkspaceAccessRole;
  /** Assumed by the API function alone, to delete a deleted session's objects and their versions. */
  readonly sessionPurge: SessionPurgeRole;
  readonly functionUrl: lambda.FunctionUrl;
  /** CloudFront in front of `functionUrl`, when the stage sets `api.domain`. */
  readonly customDomain?: CustomDomain;
  /** GitHub's way in when the API URL answers only CloudFront: the `webhook` alias's public URL, serving that one route. */
  readonly webhookUrl?: lambda.FunctionUrl;
  readonly network: RunnerNetwork;
  /** Present when the stage enables `network.egressProxy`. */
  readonly egressProxy?: EgressProxy;
  /** The far end of the S3 mailbox for sandboxed HTTP requests, $0 idle (constructs/egress-forwarder-function.ts). */
  readonly egressForwarder: EgressForwarderFunction;
  /** The Bedrock model and profile ids the turn functions may invoke (empty with the Anthropic API). */
  readonly bedrockModels: readonly string[];
  /** The on-failure destination of every asynchronous invocation. */
  readonly asyncFailures: AsyncFailures;
  readonly alarms: StratusAlarms;
  readonly dashboard: StratusDashboard;

  private readonly stage: StageConfig;

  constructor(scope: Construct, id: string, props: StratusStackProps) {
    super(scope, id, props);
    const { stage } = props;
    this.stage = stage;
    const retention = stage.logRetentionDays as logs.RetentionDays;
    this.bedrockModels = stage.model.provider === 'bedrock' ? [stage.model.name, ...(stage.model.fallback ? [stage.model.fallback] : [])] : [];
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
    this.egressForwarder = new EgressForwarderFunction(this, 'EgressForwarder', {
      prefix: stage.prefix,
      bucket: this.data.bucket,
      logRetentionDays: retention,
      sourceMaps: stage.sourceMaps,
    });

    this.asyncFailures = new AsyncFailures(this, 'AsyncFailures', { prefix: stage.prefix });
    const apiFunctionName = `${stage.prefix}-api`;
    const baseEnv = this.engineEnvironment(stage, apiFunctionName);
    this.cron = this.cronFunction(stage, baseEnv, retention);
    this.schedules = new Schedules(this, 'Schedules', { groupName: stage.prefix, cronFunction: this.cron.fn });
    this.api = this.apiFunction(stage, apiFunctionName, baseEnv, retention);
    this.gitFunction = stage.githubApp ? this.gitRemoteFunction(stage, retention) : undefined;
    this.githubWorker = stage.githubApp ? this.githubWorkerFunction(stage, baseEnv, retention) : undefined;
    this.workspaceAccess = new WorkspaceAccessRole(this, 'WorkspaceAccess', {
      bucket: this.data.bucket,
      roleName: `${stage.prefix}-workspace-access`,
      trustedBy: this.engines().map((engine) => engine.role),
    });
    this.sessionPurge = new SessionPurgeRole(this, 'SessionPurge', {
      bucket: this.data.bucket,
      roleName: `${stage.prefix}-session-purge`,
      trustedBy: this.api.role,
    });
    this.api.fn.addEnvironment('STRATUS_PURGE_ROLE_ARN', this.sessionPurge.role.roleArn);
    this.grantEngines(apiFunctionName);

    ({ functionUrl: this.functionUrl, customDomain: this.customDomain, webhookUrl: this.webhookUrl } = this.entrances(stage));
    ({ alarms: this.alarms, dashboard: this.dashboard } = this.operations(stage));
    this.outputs();
    acknowledgeNagFindings(this);
  }

  /**
   * How clients reach the API. Without a domain: the public streaming Function URL (the app
   * authenticates every request with bearer tokens; IAM auth would shut out plain HTTP clients).
   * With one: the URL takes only CloudFront's signed requests, and, when GitHub issue fixing is
   * on, a second public URL on the `webhook` alias receives GitHub's unsigned deliveries.
   */
  private entrances(stage: StageConfig): { functionUrl: lambda.FunctionUrl; customDomain?: CustomDomain; webhookUrl?: lambda.FunctionUrl } {
    const cors = stage.api.corsOrigins?.length ? { cors: corsFor(stage.api.corsOrigins) } : {};
    const domain = stage.api.domain;
    const functionUrl = this.api.fn.addFunctionUrl({
      authType: domain ? lambda.FunctionUrlAuthType.AWS_IAM : lambda.FunctionUrlAuthType.NONE,
      invokeMode: lambda.InvokeMode.RESPONSE_STREAM,
      ...cors,
    });
    if (!domain) return { functionUrl };
    const customDomain = new CustomDomain(this, 'Domain', {
      functionUrl,
      domainNames: domain.names,
      certificateArn: domain.certificateArn,
      prefix: stage.prefix,
    });
    if (!stage.githubApp) return { functionUrl, customDomain };
    const alias = new lambda.Alias(this, 'WebhookAlias', { aliasName: WEBHOOK_ALIAS, version: this.api.fn.currentVersion });
    const webhookUrl = alias.addFunctionUrl({ authType: lambda.FunctionUrlAuthType.NONE, invokeMode: lambda.InvokeMode.RESPONSE_STREAM });
    return { functionUrl, customDomain, webhookUrl };
  }

  private cronFunction(stage: StageConfig, baseEnv: Record<string, string>, retention: logs.RetentionDays): TurnEngineFunction {
    return new TurnEngineFunction(this, 'Cron', {
      functionName: `${stage.prefix}-cron`,
      description: 'Stratus cron: runs the turn a Scheduler schedule asks for.',
      entry: ENTRIES.cron,
      memoryMb: stage.api.memoryMb,
      timeoutSeconds: stage.cron.timeoutSeconds,
      reservedConcurrency: stage.cron.reservedConcurrency,
      environment: {
        ...baseEnv,
        POWERTOOLS_SERVICE_NAME: 'stratus-cron',
        // A GitHub run's question that times out here goes on to its pull request through the worker (functions/github/resumed-run.ts).
        ...(stage.githubApp ? { STRATUS_GITHUB_WORKER_FUNCTION: githubWorkerName(stage) } : {}),
      },
      logRetentionDays: retention,
      sourceMaps: stage.sourceMaps,
    });
  }

  /** Alarms (to the SNS topic) and the dashboard over every function. */
  private operations(stage: StageConfig): { alarms: StratusAlarms; dashboard: StratusDashboard } {
    const functions = { api: this.api.fn, cron: this.cron.fn, runner: this.runner.fn, ...(this.githubWorker ? { githubWorker: this.githubWorker.fn } : {}) };
    const alarms = new StratusAlarms(this, 'Alarms', {
      prefix: stage.prefix,
      functions,
      scheduleGroup: this.schedules.group,
      failureQueues: { asyncFailures: this.asyncFailures.queue },
    });
    const dashboard = new StratusDashboard(this, 'Dashboard', {
      prefix: stage.prefix,
      namespace: METRICS_NAMESPACE,
      stage: stage.name,
      turnServices: ['stratus-api', 'stratus-cron', ...(this.githubWorker ? ['stratus-github-worker'] : [])],
      functions,
      price: stage.modelPrice,
    });
    return { alarms, dashboard };
  }

  /** What an operator needs after a deploy: the API URL, the bucket, and the secrets to fill in. */
  private outputs(): void {
    new CfnOutput(this, 'ApiUrl', { value: this.customDomain ? `https://${this.stage.api.domain!.names[0]}/` : this.functionUrl.url });
    if (this.customDomain)
      new CfnOutput(this, 'DistributionDomain', {
        value: this.customDomain.distribution.distributionDomainName,
        description: 'Point the custom domain (CNAME or alias record) here.',
      });
    if (this.webhookUrl)
      new CfnOutput(this, 'GithubWebhookUrl', { value: `${this.webhookUrl.url}v1/github/webhook`, description: "The GitHub App's webhook URL." });
    new CfnOutput(this, 'AlarmTopic', { value: this.alarms.topic.topicArn });
    new CfnOutput(this, 'BucketName', { value: this.data.bucket.bucketName });
    new CfnOutput(this, 'ApiTokensSecret', { value: this.secrets.apiTokens.secretName });
    if (this.secrets.anthropicApiKey) new CfnOutput(this, 'AnthropicKeySecret', { value: this.secrets.anthropicApiKey.secretName });
  }

  private runnerFunction(stage: StageConfig, retention: logs.RetentionDays): SandboxRunnerFunction {
    return new SandboxRunnerFunction(this, 'Runner', {
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
  }

  private gitRemoteFunction(stage: StageConfig, retention: logs.RetentionDays): GitFunction {
    return new GitFunction(this, 'Git', {
      functionName: `${stage.prefix}-git`,
      dockerfile: stage.runner.dockerfile,
      memoryMb: stage.runner.memoryMb,
      ephemeralStorageMb: stage.runner.ephemeralStorageMb,
      timeoutSeconds: stage.runner.timeoutSeconds,
      logRetentionDays: retention,
    });
  }

  /**
   * The egress proxy when the stage enables it; the runner learns which way its commands reach the
   * network. Without it (the default, $0 idle) their requests go through the S3 mailbox to the
   * egress forwarder (docs/security.md, "Set-up steps' registries").
   */
  private egress(stage: StageConfig, retention: logs.RetentionDays): EgressProxy | undefined {
    if (!stage.network.egressProxy) {
      this.runner.fn.addEnvironment('STRATUS_EGRESS', 'mailbox');
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
      STRATUS_EGRESS: this.egressProxy ? 'proxy' : 'mailbox',
      ...(this.egressProxy ? { STRATUS_EGRESS_KEY_SECRET: this.egressProxy.tokenKey.secretArn } : {}),
      ...tracesEnvironment(stage.traces),
    };
  }

  private apiFunction(stage: StageConfig, functionName: string, baseEnv: Record<string, string>, retention: logs.RetentionDays): TurnEngineFunction {
    const api = new TurnEngineFunction(this, 'Api', {
      functionName,
      description: 'Stratus API: the Hono app behind a streaming Function URL; runs turns.',
      entry: ENTRIES.api,
      memoryMb: stage.api.memoryMb,
      timeoutSeconds: stage.api.timeoutSeconds,
      reservedConcurrency: stage.api.reservedConcurrency,
      // The web console's static files (built by scripts/setup.sh) are read from disk, not bundled.
      assetDirs: { [CONSOLE_BUILD_DIR]: 'console' },
      environment: {
        ...baseEnv,
        POWERTOOLS_SERVICE_NAME: 'stratus-api',
        // The API verifies webhooks and hands them on; only the worker reads the App's private key.
        ...(this.secrets.githubWebhookSecret
          ? { STRATUS_GITHUB_WEBHOOK_SECRET_ARN: this.secrets.githubWebhookSecret.secretArn, STRATUS_GITHUB_WORKER_FUNCTION: githubWorkerName(stage) }
          : {}),
        STRATUS_SCHEDULE_GROUP: this.schedules.group.scheduleGroupName,
        STRATUS_SCHEDULER_ROLE_ARN: this.schedules.schedulerRole.roleArn,
        STRATUS_CRON_FUNCTION_ARN: this.cron.fn.functionArn,
      },
      logRetentionDays: retention,
      sourceMaps: stage.sourceMaps,
    });
    // A continuation that fails is not retried blindly: the lease expires and the next turn repairs the log; the event is kept.
    this.asyncFailures.catchFailuresOf(api.fn);
    // The admin's redrive (GET /v1/admin/async-failures, POST …/redrive) reads that queue.
    this.asyncFailures.allowRedriveBy(api.fn);
    return api;
  }

  private githubWorkerFunction(stage: StageConfig, baseEnv: Record<string, string>, retention: logs.RetentionDays): TurnEngineFunction {
    const appKey = this.secrets.githubAppPrivateKey!;
    const githubAppId = (this.node.tryGetContext('githubAppId') as string | undefined) ?? stage.github.appId;
    const worker = new TurnEngineFunction(this, 'GithubWorker', {
      functionName: githubWorkerName(stage),
      description: 'Stratus GitHub worker: runs an accepted webhook trigger to a pull request or an explaining comment.',
      entry: ENTRIES.githubWorker,
      memoryMb: stage.api.memoryMb,
      timeoutSeconds: stage.github.workerTimeoutSeconds,
      environment: {
        ...baseEnv,
        POWERTOOLS_SERVICE_NAME: 'stratus-github-worker',
        // Clone and push go to the git function, outside the runner's VPC (no egress proxy needed).
        STRATUS_GIT_FUNCTION: this.gitFunction!.fn.functionName,
        STRATUS_GITHUB_APP_KEY_SECRET: appKey.secretArn,
        ...(githubAppId ? { STRATUS_GITHUB_APP_ID: githubAppId } : {}),
        ...(stage.github.apiUrl ? { STRATUS_GITHUB_API_URL: stage.github.apiUrl } : {}),
        // The Function URL's own address cannot be passed in without a cycle; a custom domain's can.
        ...(stage.api.domain ? { STRATUS_CONSOLE_URL: `https://${stage.api.domain.names[0]}/console/` } : {}),
      },
      logRetentionDays: retention,
      sourceMaps: stage.sourceMaps,
    });
    // A run is not retried blindly (it may have pushed or commented): the delivery is recorded, the hold expires, the event is kept.
    this.asyncFailures.catchFailuresOf(worker.fn);
    return worker;
  }

  /** The GitHub worker's secrets and invokes, and who may hand it work. */
  private grantGithubWorker(): void {
    const worker = this.githubWorker;
    if (!worker) return;
    this.secrets.githubWebhookSecret?.grantRead(this.api.role);
    this.secrets.githubAppPrivateKey?.grantRead(worker.role);
    // The worker alone sends clones and pushes (with the token) to the git function.
    worker.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [this.gitFunction!.fn.functionArn] }));
    // The webhook route hands accepted deliveries to the worker (an asynchronous invoke), and the
    // worker hands itself a comment queued while a run worked that no turn took (functions/github/queue-into-run.ts);
    // the API (an answer or plan decision) and the cron function (a question's timeout) hand it a resumed run (functions/github/resumed-run.ts).
    const toWorker = new iam.PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [this.functionArnFromName(githubWorkerName(this.stage))] });
    this.api.role.addToPrincipalPolicy(toWorker);
    this.cron.role.addToPrincipalPolicy(toWorker);
    worker.role.addToPrincipalPolicy(toWorker);
  }

  /** The engines' access: tables, their S3 prefixes, the runner, the secrets, and their own continuations. */
  private grantEngines(apiFunctionName: string): void {
    const bucket = this.data.bucket;
    for (const engine of this.engines()) {
      engine.fn.addEnvironment('STRATUS_WORKSPACE_ROLE_ARN', this.workspaceAccess.role.roleArn);
      const role = engine.role;
      role.addToPrincipalPolicy(this.tableAccess());
      role.addToPrincipalPolicy(
        new iam.PolicyStatement({
          actions: ['s3:GetObject', 's3:PutObject'],
          resources: [bucket.arnForObjects(`${BUCKET_LAYOUT.toolResults}*`), bucket.arnForObjects(`${BUCKET_LAYOUT.spill}*`)],
        }),
      );
      role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [this.runner.fn.functionArn] }));
      this.secrets.anthropicApiKey?.grantRead(role);
      for (const statement of this.bedrockModels.length > 0 ? bedrockInvokeStatements(this, this.bedrockModels) : []) role.addToPrincipalPolicy(statement);
      this.secrets.apiTokens.grantRead(role);
      this.egressProxy?.tokenKey.grantRead(role);
      // In the mailbox mode the engines write each workspace's grant before its commands run, and delete it.
      if (!this.egressProxy) {
        role.addToPrincipalPolicy(
          new iam.PolicyStatement({ actions: ['s3:PutObject', 's3:DeleteObject'], resources: [bucket.arnForObjects(`${EGRESS_GRANTS_PREFIX}*`)] }),
        );
      }
    }
    this.grantGithubWorker();
    this.schedules.allowManageBy(this.api.role);
    this.allowEnginesToSchedule();
    // Long turns continue in an async invocation of the API function, from the API itself or
    // from a scheduled turn in the cron function. The ARN is built from the name: referencing
    // the function from its own role's policy would be a circular dependency.
    const continuationTarget = new iam.PolicyStatement({
      actions: ['lambda:InvokeFunction'],
      resources: [this.functionArnFromName(apiFunctionName)],
    });
    this.api.role.addToPrincipalPolicy(continuationTarget);
    this.cron.role.addToPrincipalPolicy(continuationTarget);
    this.githubWorker?.role.addToPrincipalPolicy(continuationTarget);
  }

  /**
   * Read and write on every table and its indexes, as one statement: a grant per table (ten
   * tables) outgrew the role's inline policy, and CDK spilled it into overflow policies.
   * Only the calls the stores make (functions/stores/).
   */
  private tableAccess(): iam.PolicyStatement {
    return new iam.PolicyStatement({
      actions: [
        'dynamodb:GetItem',
        'dynamodb:PutItem',
        'dynamodb:UpdateItem',
        'dynamodb:DeleteItem',
        'dynamodb:Query',
        'dynamodb:Scan',
        'dynamodb:BatchWriteItem',
        'dynamodb:ConditionCheckItem',
        'dynamodb:DescribeTable',
      ],
      resources: TABLE_KEYS.flatMap((key) => {
        const arn = this.data.tables[key].tableArn;
        return 'indexes' in TABLES[key] ? [arn, `${arn}/index/*`] : [arn];
      }),
    });
  }

  /** The functions that run turns: API, cron, and the GitHub worker when there is one. */
  private engines(): TurnEngineFunction[] {
    return [this.api, this.cron, ...(this.githubWorker ? [this.githubWorker] : [])];
  }

  /**
   * Every turn engine may make and retire schedules: an agent's CronCreate runs in any turn (an
   * API one, a scheduled one, a GitHub run's), and a one-shot's last firing deletes it. The cron
   * function's own ARN is built from its name: a reference from its own environment would be circular.
   */
  private allowEnginesToSchedule(): void {
    const scheduling = {
      STRATUS_SCHEDULE_GROUP: this.schedules.group.scheduleGroupName,
      STRATUS_SCHEDULER_ROLE_ARN: this.schedules.schedulerRole.roleArn,
      STRATUS_CRON_FUNCTION_ARN: this.functionArnFromName(`${this.stage.prefix}-cron`),
    };
    for (const engine of [this.cron, this.githubWorker]) {
      if (!engine) continue;
      for (const [name, value] of Object.entries(scheduling)) engine.fn.addEnvironment(name, value);
      this.schedules.allowManageBy(engine.role);
    }
  }

  /** A function's ARN built from its name (a role's policy cannot reference its own function: a cycle). */
  private functionArnFromName(name: string): string {
    return this.formatArn({ service: 'lambda', resource: 'function', resourceName: name, arnFormat: ArnFormat.COLON_RESOURCE_NAME });
  }
}

function githubWorkerName(stage: StageConfig): string {
  return `${stage.prefix}-github-worker`;
}

/** The Function URL's CORS answer for the stage's origins: the methods and headers the API uses. */
function corsFor(origins: readonly string[]): lambda.FunctionUrlCorsOptions {
  return {
    allowedOrigins: [...origins],
    allowedMethods: [lambda.HttpMethod.ALL],
    // x-amz-content-sha256: behind CloudFront, browsers send the body's hash with every POST/PUT.
    allowedHeaders: ['authorization', 'content-type', 'accept', 'last-event-id', 'idempotency-key', 'prefer', 'x-amz-content-sha256'],
    exposedHeaders: ['retry-after'],
    maxAge: Duration.hours(1),
  };
}
