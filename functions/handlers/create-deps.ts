import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { LambdaClient } from '@aws-sdk/client-lambda';
import type { S3Client } from '@aws-sdk/client-s3';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { StorageCredentials } from '../../sandbox-runner/protocol.ts';
import { cachedByCredentials, s3ClientConfig } from '../../sandbox-runner/common/s3-client-config.ts';
import { createLambdaContinuationScheduler } from '../deps/continuation.ts';
import { createLambdaGithubDispatcher } from '../deps/github-dispatch.ts';
import { createGithubClientFactory } from '../github-api/github-client.ts';
import { GithubItemStore } from '../stores/github-item-store.ts';
import { GithubStore } from '../stores/github-store.ts';
import { GithubInstallationStore } from '../stores/github-installation-store.ts';
import { createLambdaRunnerClient, type RunnerClient, type WorkspaceCredentialSource } from '../runner-client/runner-client.ts';
import { withEgressGrants } from '../runner-client/egress-grants.ts';
import { GithubDeliveryLog } from '../stores/github-delivery-log.ts';
import { GithubItemRateStore } from '../stores/github-item-rates.ts';
import { SteerStore } from '../stores/steer-store.ts';
import type { PurgeCredentialSource } from '../runner-client/purge-credentials.ts';
import { createTimeOrderedId } from '../shared/ids.ts';
import { createLogger } from '../shared/logger.ts';
import { createMetrics } from '../shared/metrics.ts';
import { NO_TRACING, type Tracing } from '../shared/tracing.ts';
import { observeModelClient } from '../model/observed-model-client.ts';
import { observeRunner } from '../runner-client/observed-runner.ts';
import { EventStore } from '../stores/event-store.ts';
import { IdempotencyStore } from '../stores/idempotency-store.ts';
import { TokenStore } from '../stores/token-store.ts';
import { TenantSettingsStore } from '../stores/tenant-settings-store.ts';
import { TenantUsageStore } from '../stores/tenant-usage.ts';
import { RunnerCallSlots } from '../stores/runner-call-slots.ts';
import { BackgroundAgentStore } from '../stores/background-agent-store.ts';
import { ApprovalStore } from '../stores/approval-store.ts';
import { BlobStore } from '../stores/blob-store.ts';
import { MessageStore } from '../stores/message-store.ts';
import { ScheduleStore } from '../stores/schedule-store.ts';
import { createSessionSchedules } from '../schedules/agent-schedules.ts';
import { SessionStore } from '../stores/session-store.ts';
import { createEventBridgeScheduleBackend, POLLING_SCHEDULE_BACKEND } from '../schedules/schedule-backend.ts';
import { createEventBridgeQuestionTimers, POLLING_QUESTION_TIMERS } from '../deps/question-timers.ts';
import { builtinTools, createToolRegistry } from '../tools/registry.ts';
import { webSearchOffered } from '../model/web-search-offer.ts';
import { createMcpClients } from '../tools/mcp/mcp-clients.ts';
import { createOutboundPolicy, type OutboundPolicy } from '../outbound/outbound-policy.ts';
import type { StratusConfig } from '../deps/config.ts';
import type { Deps } from '../deps/deps.ts';
import type { LazyClient } from '../shared/lazy-client.ts';
import { createModelClient } from './model-client.ts';
import { once } from './once.ts';
import { createLambdaAsyncInvoke } from '../deps/async-invoke.ts';
import type { FailedInvocationStore } from '../stores/failed-invocations.ts';
import { createSqsFailedInvocations } from '../stores/sqs-failed-invocations.ts';
import { createAwsJsonCall } from '../shared/aws-json-call.ts';
import { SystemError } from '../shared/errors.ts';

export interface CreateDepsOverrides {
  /** Where failed asynchronous invocations are read (locally, the local store); default the config's SQS queue. */
  failedInvocations?: FailedInvocationStore;
  workspaceCredentials?: WorkspaceCredentialSource;
  purgeCredentials?: PurgeCredentialSource;
  instanceId?: string;
  tracing?: Tracing;
  writeMetrics?: (line: string) => void;
  /**
   * Given every AWS SDK client built here, workspace clients included (the local stack records
   * each call's IAM request with it: local/aws-call-log.ts).
   */
  observeClient?: <T>(client: T) => T;
}

/** The schedule records, their EventBridge mirror (locally none: the scheduler polls), and an agent's schedules of its session over both. */
function scheduleDeps(config: StratusConfig, db: ReturnType<typeof awsClients>['db'], scheduler: ReturnType<typeof awsClients>['scheduler']) {
  const schedules = new ScheduleStore(db, config.tables.schedules);
  const scheduleBackend = config.scheduler ? createEventBridgeScheduleBackend(scheduler, config.scheduler) : POLLING_SCHEDULE_BACKEND;
  return {
    schedules,
    scheduleBackend,
    agentSchedules: (session: { sessionId: string; tenantId: string }) =>
      createSessionSchedules({ schedules, scheduleBackend, clock: Date.now, newId: createTimeOrderedId }, session),
  };
}

/**
 * The composition root (above every layer it wires): the only place AWS and model clients are
 * constructed (the model client in ./model-client.ts), each traced and measured here. The same
 * function serves Lambda and the local stack; only endpoints and credentials in the config differ.
 */
export function createDeps(config: StratusConfig, overrides: CreateDepsOverrides = {}): Deps {
  const { tracing, log, metrics, instanceId } = observability(config, overrides);
  const observe = overrides.observeClient ?? ((client) => client);
  const { db, lambda, scheduler, s3 } = awsClients(config, { captureClient: (client) => observe(tracing.captureClient(client)) });
  const blobs = new BlobStore(s3, config.bucket);
  const outbound = outboundPolicy(config);
  return {
    config,
    sessions: new SessionStore(db, config.tables.sessions),
    messages: new MessageStore(db, config.tables.messages, blobs),
    blobs,
    events: new EventStore(db, config.tables.events),
    ...scheduleDeps(config, db, scheduler),
    approvals: new ApprovalStore(db, config.tables.approvals),
    questionTimers: config.scheduler ? createEventBridgeQuestionTimers(scheduler, config.scheduler) : POLLING_QUESTION_TIMERS,
    // Background sub-agents sit in the sessions table under their log ids (not listed: no tenantId).
    backgroundAgents: new BackgroundAgentStore(db, config.tables.sessions),
    idempotency: new IdempotencyStore(db, config.tables.idempotency),
    tokens: new TokenStore(db, config.tables.apiTokens),
    ...tenantStores(config, db),
    runner: withGrantsInMailboxMode(
      config,
      observeRunner(createLambdaRunnerClient(lambda, config.runnerFunction, config.gitFunction), { metrics, tracing, clock: Date.now }),
      s3,
    ),
    continuations: createLambdaContinuationScheduler(lambda, config.selfFunction),
    failedInvocations: overrides.failedInvocations ?? sqsFailedInvocations(config),
    asyncInvoke: createLambdaAsyncInvoke(lambda),
    ...githubDeps(config, db, lambda),
    workspaceStorage: lazyWorkspaceStorage(config, observe),
    workspaceCredentials: overrides.workspaceCredentials ?? { forWorkspace: () => staticCredentials(config), forEnvironment: () => staticCredentials(config) },
    purgeCredentials: overrides.purgeCredentials ?? { forSession: () => staticCredentials(config) },
    model: observeModelClient(createModelClient(config), { tracing, metrics, clock: Date.now }),
    tools: createToolRegistry(builtinTools({ webSearch: webSearchOffered(config.model) })),
    outbound,
    mcp: createMcpClients(config.mcp, outbound),
    clock: Date.now,
    newId: createTimeOrderedId,
    log,
    metrics,
    tracing,
    startInvocation({ context, correlationId }) {
      const { coldStart } = log.startInvocation({ context, correlationId });
      tracing.startInvocation();
      if (coldStart && context) metrics.emit({ ColdStart: { value: 1, unit: 'Count' } }, { dimensions: { function_name: context.functionName } });
    },
    instanceId,
  };
}

/** What each tenant stores, sets and runs, against its quota and caps: all in the tenants' tables. */
function tenantStores(config: StratusConfig, db: DynamoDBDocumentClient) {
  return {
    tenantUsage: new TenantUsageStore(db, { usage: config.tables.tenantUsage, sessions: config.tables.sessions }, config.tenantStorageQuotaBytes),
    tenantSettings: new TenantSettingsStore(db, config.tables.tenantSettings),
    runnerSlots: new RunnerCallSlots(db, config.tables.tenantUsage, config.tenantRunnerCalls, Date.now),
  };
}

/** In the `mailbox` egress mode each command's network is the grant the harness writes before the call (egress-grants.ts). */
function withGrantsInMailboxMode(config: StratusConfig, runner: RunnerClient, s3: LazyClient<S3Client>): RunnerClient {
  return config.egress === 'mailbox' ? withEgressGrants(runner, { s3, bucket: config.bucket, clock: Date.now }) : runner;
}

/** The one policy of calls made on a session's behalf; the configured stand-in endpoints are among the stack's own. */
function outboundPolicy(config: StratusConfig): OutboundPolicy {
  const standIns = Object.values(config.endpoints).filter((e): e is string => typeof e === 'string');
  return createOutboundPolicy({ privateNetworkAllow: config.outbound.privateNetworkAllow, ownEndpoints: [...standIns, ...config.outbound.ownEndpoints] });
}

/** Logs, metrics and traces with the config's stage and service (tracing off unless the Lambda root brings the X-Ray tracer). */
function observability(config: StratusConfig, overrides: { instanceId?: string; tracing?: Tracing; writeMetrics?: (line: string) => void }) {
  const tracing = overrides.tracing ?? NO_TRACING;
  const { observability: o } = config;
  const instanceId = overrides.instanceId ?? createTimeOrderedId('inst');
  const log = createLogger({ level: config.logLevel, service: o.service, sampleRate: o.logSampleRate, context: { stage: o.stage, instance: instanceId } });
  const metrics = createMetrics({ namespace: o.namespace, service: o.service, stage: o.stage, write: overrides.writeMetrics });
  return { tracing, log, metrics, instanceId };
}

/**
 * The AWS SDK clients, pointed at the config's endpoints (the local stack's servers, or AWS), each
 * traced. All but DynamoDB's are built on their first call (most requests make none: an S3 read
 * or write, a runner call, a continuation, a schedule change), so their packages stay off a
 * cold start's import path (LazyClient).
 */
function awsClients(config: StratusConfig, tracing: Pick<Tracing, 'captureClient'>) {
  const aws = {
    region: config.region,
    ...(config.localCredentials ? { credentials: config.localCredentials } : {}),
  };
  const dynamo = tracing.captureClient(new DynamoDBClient({ ...aws, endpoint: config.endpoints.dynamodb }));
  const db = DynamoDBDocumentClient.from(dynamo, { marshallOptions: { removeUndefinedValues: true } });
  const lambda = once(async () => {
    const { LambdaClient } = await import('@aws-sdk/client-lambda');
    return tracing.captureClient(new LambdaClient({ ...aws, endpoint: config.endpoints.lambda }));
  });
  const scheduler = once(async () => {
    const { SchedulerClient } = await import('@aws-sdk/client-scheduler');
    return tracing.captureClient(new SchedulerClient({ ...aws }));
  });
  // Checksums only when required: safe for S3, and the local S3 server needs it (docs/local-stack.md).
  const s3 = once(async () => {
    const { S3Client } = await import('@aws-sdk/client-s3');
    return tracing.captureClient(
      new S3Client({
        ...aws,
        endpoint: config.endpoints.s3,
        forcePathStyle: config.endpoints.s3 !== undefined,
        requestChecksumCalculation: 'WHEN_REQUIRED',
        responseChecksumValidation: 'WHEN_REQUIRED',
      }),
    );
  });
  return { db, lambda, scheduler, s3 };
}

/** S3 clients holding one workspace's minted credentials, built once the S3 package is loaded (on the first workspace access). */
function lazyWorkspaceStorage(config: StratusConfig, observe: <T>(client: T) => T): (credentials: StorageCredentials) => Promise<S3Client> {
  const factory = once(async () => {
    const { S3Client } = await import('@aws-sdk/client-s3');
    return cachedByCredentials((credentials) => observe(new S3Client(s3ClientConfig({ region: config.region, endpoint: config.endpoints.s3 }, credentials))));
  });
  return async (credentials) => (await factory())(credentials);
}

/** GitHub issue fixing: its tables, the worker deliveries are handed to, and the GitHub API clients. */
function githubDeps(
  config: StratusConfig,
  db: DynamoDBDocumentClient,
  lambda: LazyClient<LambdaClient>,
): Pick<Deps, 'github' | 'githubInstallations' | 'githubItems' | 'githubDispatch' | 'githubClients' | 'githubItemRates' | 'githubDeliveryLog' | 'steers'> {
  return {
    github: new GithubStore(db, {
      repos: config.tables.githubRepos,
      deliveries: config.tables.githubDeliveries,
      runs: config.tables.githubRuns,
      threads: config.tables.githubThreads,
    }),
    githubInstallations: new GithubInstallationStore(db, config.tables.githubInstallations),
    githubItems: new GithubItemStore(db, config.tables.githubThreads),
    githubItemRates: new GithubItemRateStore(db, config.tables.githubItemRates),
    githubDeliveryLog: new GithubDeliveryLog(db, config.tables.githubDeliveryLog, config.github.deliveryLogDays),
    steers: new SteerStore(db, config.tables.githubSteers),
    githubDispatch: createLambdaGithubDispatcher(lambda, config.github.workerFunction ?? config.selfFunction),
    githubClients: createGithubClientFactory(config.github),
  };
}

/** The async-failures queue through SQS's JSON protocol, with the function's own credentials; a clear error where none is configured. */
function sqsFailedInvocations(config: StratusConfig): FailedInvocationStore {
  const queueUrl = config.asyncFailuresQueueUrl;
  if (!queueUrl) {
    const missing = async (): Promise<never> => {
      throw new SystemError('No async-failures queue is configured (STRATUS_ASYNC_FAILURES_QUEUE_URL).');
    };
    return { receive: missing, remove: missing, release: missing };
  }
  const credentials = once(async () => (await import('@aws-sdk/credential-provider-node')).defaultProvider());
  const call = createAwsJsonCall({
    endpoint: `${new URL(queueUrl).origin}/`,
    region: config.region,
    service: 'sqs',
    credentials: async () => (await credentials())(),
  });
  return createSqsFailedInvocations(call, queueUrl);
}

/** Without a minter, the stand-ins' static credentials (a stack of stand-ins started on its own). */
async function staticCredentials(config: StratusConfig): Promise<StorageCredentials> {
  if (!config.localCredentials) throw new Error('No credential source: in AWS, the scoped STS credential minters must be configured.');
  return { ...config.localCredentials };
}
