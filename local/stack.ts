import { ADMIN_TENANT } from '../functions/api/token-auth.ts';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { serve } from '@hono/node-server';
import { createServer, type Server } from 'node:http';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { handleAsyncEvent } from '../functions/handlers/async-events.ts';
import { handleGithubWorkerEvent } from '../functions/github/github-worker-event.ts';
import { startLocalScheduler, type LocalScheduler } from '../functions/schedules/local-scheduler.ts';
import { createApp } from '../functions/api/app.ts';
import { configSchema, sharedConfig, type StratusConfig, type StratusConfigInput } from '../functions/deps/config.ts';
import type { EnvSettings } from '../functions/deps/settings.ts';
import { createDeps } from '../functions/handlers/create-deps.ts';
import type { ModelProvider } from '../functions/model/model-names.ts';
import type { Deps } from '../functions/deps/deps.ts';
import { NO_TRACING, type Tracing } from '../functions/shared/tracing.ts';
import { withOtlpExport } from '../functions/handlers/otel-tracing.ts';
import { ensureTables } from '../functions/stores/ensure-tables.ts';
import { tableNames } from '../functions/stores/tables.ts';
import { startDynamoServer } from './dynamo-server.ts';
import { startLambdaInvokeServer, type AsyncInvocationWatch, type LocalFunction } from './lambda-invoke-server.ts';
import type { RunnerWorkerInit } from './runner-worker.ts';
import { createAwsCallLog, currentFunction, runAsFunction, type AwsCallLog } from './aws-call-log.ts';
import { createAsyncFailureStore } from './async-failure-store.ts';
import type { AsyncFailureRecord, FailedInvocationStore } from '../functions/stores/failed-invocations.ts';
import { createLocalPurgeCredentials, createLocalWorkspaceCredentials, type LocalMinter } from './local-sts.ts';
import { createTenantWorkerPool, type TenantIsolatedFunction, type TenantWorkerPool } from './tenant-worker-pool.ts';
import { createLocalMetricsSink } from './metrics-sink.ts';
import { closeServer } from './net/listen.ts';
import { freshLocalCredentials, type LocalCredentials } from './local-credentials.ts';
import { LOCAL_ACCOUNT } from './aws-call-iam.ts';
import { startS3ServerProcess } from './s3-server-process.ts';
import { ensureBucket } from './ensure-bucket.ts';
import type { ExternalEndpoints } from './external-endpoints.ts';
import type { EmbeddedServer } from './service-child.ts';
import type { S3NotificationRule } from './s3-notifications.ts';
import { EGRESS_FORWARDER_FUNCTION, egressMailboxNotification, localEgressForwarder } from './local-egress-forwarder.ts';
import { demoBrain } from './scripted-model/demo-brain.ts';
import { startScriptedModelServer, type ScriptedModelServer } from './scripted-model/server.ts';
import type { Brain } from './scripted-model/script.ts';

export const LOCAL_BUCKET = 'stratus-local';
/**
 * The local names of the functions and roles: the deployed stack's names with `stratus` for the
 * stage's prefix (`stratus-prod-api` → `stratus-api`), which the IAM coverage check relies on to
 * find each one's role in the template (docs/local-stack.md).
 */
const LOCAL_PREFIX = 'stratus';
export const RUNNER_FUNCTION = `${LOCAL_PREFIX}-tenant-runner`;
export const API_FUNCTION = `${LOCAL_PREFIX}-api`;
export const CRON_FUNCTION = `${LOCAL_PREFIX}-cron`;
export const GITHUB_WORKER_FUNCTION = `${LOCAL_PREFIX}-github-worker`;
/** What `npm start` keeps of the scripted model's request log (`GET /_requests`). */
export const LOCAL_MODEL_REQUESTS_KEPT = 200;

export interface LocalStackOptions {
  /** Where DynamoDB, S3 and the runner keep their files; a restart on the same folder keeps everything. */
  dataDir: string;
  /** API port (0 = ephemeral). */
  port?: number;
  /** The stand-ins' ports (each 0 or unset = ephemeral). */
  ports?: Partial<Record<'dynamodb' | 's3' | 'lambda' | 'model', number>>;
  /** Use the real Anthropic API (or ANTHROPIC_BASE_URL) with this key; otherwise the scripted model server. */
  anthropic?: { apiKey: string; baseURL?: string; model?: string };
  /** Use Amazon Bedrock in this region with the default AWS credential chain (when `anthropic` is unset). */
  bedrock?: { region: string; model?: string };
  /**
   * Which provider's client reaches the scripted model: `bedrock` runs the Bedrock SDK against
   * the server's Bedrock Runtime side (the same scripts, event-stream framing). Default `anthropic`.
   */
  scriptedProvider?: ModelProvider;
  /** The scripted model's brain when no queue entry is waiting (default: the demo brain). */
  brain?: Brain;
  /** How many requests the scripted model keeps for inspection (default: all; see its server). */
  keepModelRequests?: number;
  /** Bearer token → tenant. Default: one token kept in `{dataDir}/api-token` for tenant "local". */
  apiTokens?: Record<string, string>;
  /** Overrides for turn settings (e.g. a short lease). */
  turn?: Partial<StratusConfig['turn']>;
  /** Overrides for model-call and context-economy settings (e.g. a small context window). */
  model?: Partial<Pick<StratusConfig['model'], 'contextWindow' | 'maxRetries' | 'retryBaseDelayMs' | 'fallbackName' | 'maxTokens' | 'name' | 'webSearch'>>;
  context?: Partial<StratusConfig['context']>;
  /**
   * The shared settings read from the environment (functions/deps/settings.ts), exactly as the
   * Lambda handlers read them; the options above and below win over them.
   */
  settings?: EnvSettings;
  /** The HTTP API's settings (CORS origins, SSE heartbeat). */
  api?: Partial<StratusConfig['api']>;
  logLevel?: StratusConfig['logLevel'];
  /** Budgets of sessions that set none (config `budgets`), and model price overrides. */
  budgets?: StratusConfig['budgets'];
  modelPrices?: Record<string, StratusConfig['modelPrices'][string]>;
  /** Stage, service, namespace and log sampling of the logs and metrics (default stage `local`). */
  observability?: Partial<StratusConfig['observability']>;
  /** Where EMF metric lines go (default: `<dataDir>/metrics.jsonl`, and stderr at log level debug; local/metrics-sink.ts). */
  writeMetrics?: (line: string) => void;
  /** Traces of the AWS SDK calls and model calls (default: none, as in Lambda without X-Ray). */
  tracing?: Tracing;
  /** How often the in-process scheduler looks for due schedules (default 15 s). */
  schedulerTickMs?: number;
  /** GitHub issue fixing: webhook secret, App or token, API URL (functions/deps/config.ts). */
  github?: StratusConfigInput['github'];
  /** The web console's built files, served at /console (default: `dist/console`, built by scripts/setup.sh). */
  consoleDir?: string;
  /** Runner processes (one per workspace) kept at most, and how long an idle one lives. */
  runnerProcesses?: { max?: number; idleMs?: number };
  /**
   * A folder to record every AWS call in, by function and role, as IAM would judge it
   * (local/aws-call-log.ts). Default: STRATUS_AWS_CALL_LOG; unset records nothing.
   */
  awsCallLog?: string;
  /**
   * Existing DynamoDB, S3 or Lambda endpoints to use instead of starting the embedded stand-ins,
   * and the key to sign with there (local/external-endpoints.ts, docs/local-stack.md).
   */
  external?: ExternalEndpoints;
}

export interface LocalStack {
  apiUrl: string;
  token: string;
  deps: Deps;
  /** Present when the scripted model is in use. */
  model?: ScriptedModelServer;
  scheduler: LocalScheduler;
  urls: { dynamodb: string; s3: string; lambda: string; model: string };
  /** Failed asynchronous invocations (continuations, purges, sub-agent runs, GitHub work), oldest first: the local async-failures queue. */
  asyncFailures(): AsyncFailureRecord[];
  stop(): Promise<void>;
}

/**
 * Boots the whole system on loopback: DynamoDB- and S3-protocol servers, the sandbox runner
 * behind the Lambda Invoke API, the model (real or scripted), and the same Hono app that runs
 * on Lambda. Everything talks through the real AWS and Anthropic SDK clients.
 */
export async function startLocalStack(opts: LocalStackOptions): Promise<LocalStack> {
  mkdirSync(opts.dataDir, { recursive: true });
  const stops: (() => Promise<void>)[] = [];
  const started = <T extends { close(): Promise<void> }>(part: T): T => (stops.push(() => part.close()), part);
  try {
    // The stack's services, listed as each starts: the runner's sandboxes never reach them (docs/security.md).
    const stackEndpoints: string[] = [];
    const service = <T extends { url: string; close(): Promise<void> }>(part: T): T => (stackEndpoints.push(part.url), started(part));
    const credentials = opts.external?.credentials ?? freshLocalCredentials();
    const { callLogDir, callLog } = awsCallLogOf(opts);
    const dynamo = service(await startOrUseDynamo(opts, credentials));
    // The functions are registered as they can be made: the runner once S3 listens, the API once
    // deps exist (it receives its own asynchronous invocations, turn continuations, as on AWS).
    const functions: Record<string, LocalFunction | TenantIsolatedFunction> = {};
    const failures = asyncFailures(opts.dataDir);
    const lambda = service(await startOrUseLambda(opts, functions, failures.watch));
    const s3 = service(await startOrUseS3(opts, credentials, lambda.url));
    if (!opts.external?.endpoints.lambda) functions[RUNNER_FUNCTION] = started(startRunnerPool(opts, s3.url, stackEndpoints, callLogDir));
    const model = opts.anthropic || opts.bedrock ? undefined : service(await startScriptedModel(opts));
    // By default one tenant token and the admin token (docs/security.md, tenant tokens), each kept in the data folder.
    const apiTokens = opts.apiTokens ?? { [defaultToken(opts.dataDir)]: 'local', [defaultToken(opts.dataDir, 'admin-token')]: ADMIN_TENANT };
    // Stopping runs backwards: the API closes first, then the invocations it started are awaited.
    stops.push(() => lambda.pending());
    // Listening before deps exist puts the API among the own endpoints the outbound policy never calls.
    const api = service(await startApiServer(opts.port));
    const config = localConfig(opts, { dynamodb: dynamo.url, s3: s3.url, lambda: lambda.url }, credentials, apiTokens, model, stackEndpoints);
    const deps = await createLocalDeps(opts, config, stops, { callLog, failedInvocations: failures.store });
    registerHarnessFunctions(functions, deps, callLog);
    await ensureTables(new DynamoDBClient({ region: config.region, endpoint: dynamo.url, credentials: config.localCredentials }), config.tables);
    api.serve(createApp(deps, { consoleDir: opts.consoleDir ?? fileURLToPath(new URL('../dist/console/', import.meta.url)) }));
    // EventBridge Scheduler's stand-in finds what is due; each firing runs as the cron function.
    const scheduler = startLocalScheduler(deps, { tickMs: opts.schedulerTickMs ?? 15_000, invoke: (run) => runAsFunction(CRON_FUNCTION, run) });
    stops.push(scheduler.stop);
    return {
      apiUrl: api.url,
      token: Object.keys(apiTokens)[0]!,
      deps,
      model,
      scheduler,
      urls: { dynamodb: dynamo.url, s3: s3.url, lambda: lambda.url, model: modelUrl(config) },
      asyncFailures: () => failures.list(),
      stop: () => stopAll(stops),
    };
  } catch (err) {
    await stopAll(stops);
    throw err;
  }
}

/** DynamoDB: the embedded stand-in, or the existing endpoint the options name (its tables are ensured later, as the stand-in's). */
async function startOrUseDynamo(opts: LocalStackOptions, credentials: LocalCredentials): Promise<EmbeddedServer> {
  const external = opts.external?.endpoints.dynamodb;
  return external ? existingEndpoint(external) : startDynamoServer({ dir: path.join(opts.dataDir, 'dynamodb'), credentials, port: opts.ports?.dynamodb });
}

/** The Lambda Invoke stand-in that runs `functions`, or an existing endpoint that serves them by the same names. */
async function startOrUseLambda(
  opts: LocalStackOptions,
  functions: Record<string, LocalFunction | TenantIsolatedFunction>,
  watch: AsyncInvocationWatch,
): Promise<EmbeddedServer & { pending(): Promise<void> }> {
  const external = opts.external?.endpoints.lambda;
  if (external) return { ...existingEndpoint(external), pending: async () => undefined };
  return startLambdaInvokeServer({ functions, port: opts.ports?.lambda, watch });
}

/**
 * S3: the embedded stand-in (in the mailbox mode it tells the egress forwarder of each request
 * object, as in AWS), or the existing endpoint the options name (local/external-endpoints.ts),
 * where a missing bucket is created.
 */
async function startOrUseS3(opts: LocalStackOptions, credentials: LocalCredentials, lambdaUrl: string): Promise<EmbeddedServer> {
  const external = opts.external?.endpoints.s3;
  if (!external) return startLocalS3(opts, credentials, opts.settings?.egress === 'mailbox' ? [egressMailboxNotification(lambdaUrl)] : []);
  const made = await ensureBucket({ endpoint: external, region: 'us-east-1', bucket: LOCAL_BUCKET, credentials });
  if (made === 'created unversioned') logError({ msg: 'the S3 endpoint cannot enable versioning: the bucket is unversioned', bucket: LOCAL_BUCKET });
  return existingEndpoint(external);
}

/** A service that runs elsewhere: the stack only points its clients at it, and stopping leaves it running. */
const existingEndpoint = (url: string): EmbeddedServer => ({ url, close: async () => undefined });

/** The S3 stand-in, versioned as the deployed bucket is (infra/constructs/data-stores.ts). */
function startLocalS3(opts: LocalStackOptions, credentials: ReturnType<typeof freshLocalCredentials>, notifications: S3NotificationRule[]) {
  return startS3ServerProcess({
    dir: path.join(opts.dataDir, 's3'),
    buckets: [LOCAL_BUCKET],
    versionedBuckets: [LOCAL_BUCKET],
    credentials,
    port: opts.ports?.s3,
    notifications,
  });
}

/** The scripted model server, on the demo brain unless the options give one. */
function startScriptedModel(opts: LocalStackOptions) {
  return startScriptedModelServer({ brain: opts.brain ?? demoBrain, keepRequests: opts.keepModelRequests, port: opts.ports?.model });
}

/** The deps, with metric documents written to the data folder unless the options take them. */
async function createLocalDeps(
  opts: LocalStackOptions,
  config: StratusConfig,
  stops: (() => Promise<void>)[],
  { callLog, failedInvocations }: { callLog: AwsCallLog | undefined; failedInvocations: FailedInvocationStore },
): Promise<Deps> {
  // OpenTelemetry joins the given tracing when the settings name a collector (STRATUS_OTEL_TRACES_ENDPOINT).
  const tracing = await withOtlpExport(opts.tracing ?? NO_TRACING, config);
  const sink = opts.writeMetrics ? undefined : createLocalMetricsSink(opts.dataDir, config.logLevel);
  // Closed last, after the API and the scheduler, whose turns may still emit.
  if (sink) stops.unshift(sink.close);
  return createDeps(config, {
    writeMetrics: opts.writeMetrics ?? sink!.write,
    tracing,
    workspaceCredentials: createLocalWorkspaceCredentials(localMinter(config, callLog)),
    purgeCredentials: createLocalPurgeCredentials(localMinter(config, callLog)),
    failedInvocations,
    ...(callLog ? { observeClient: callLog.observe } : {}),
  });
}

/** Workspace and purge credentials minted as STS would (local-sts.ts); the AssumeRole each stands for is recorded. */
function localMinter(config: StratusConfig, callLog: AwsCallLog | undefined): LocalMinter {
  return {
    credentials: config.localCredentials!,
    bucket: config.bucket,
    role: (name) => ({ roleName: `${LOCAL_PREFIX}-${name}`, roleArn: `arn:aws:iam::${LOCAL_ACCOUNT}:role/${LOCAL_PREFIX}-${name}` }),
    onAssumeRole: callLog && ((arn) => callLog.record({ function: currentFunction(), action: 'sts:AssumeRole', resource: arn, context: {} })),
  };
}

/**
 * The API function receives its own asynchronous invocations (turn continuations), and webhook
 * deliveries (asynchronous) and the API's lookups (synchronous) reach the GitHub worker, as in
 * AWS, here in the same process; so do the egress forwarder's notifications in the mailbox mode.
 */
function registerHarnessFunctions(functions: Record<string, LocalFunction | TenantIsolatedFunction>, deps: Deps, callLog: AwsCallLog | undefined): void {
  functions[API_FUNCTION] = (event) => runAsFunction(API_FUNCTION, () => handleAsyncEvent(deps, event));
  functions[GITHUB_WORKER_FUNCTION] = (event) => runAsFunction(GITHUB_WORKER_FUNCTION, () => handleGithubWorkerEvent(deps, event));
  // In the mailbox egress mode, the S3 stand-in's notifications reach the egress forwarder.
  if (deps.config.egress === 'mailbox') functions[EGRESS_FORWARDER_FUNCTION] = localEgressForwarder(deps.config, callLog?.observe);
}

/** Where the stack records its AWS calls for the IAM coverage check, if anywhere. */
function awsCallLogOf(opts: LocalStackOptions): { callLogDir?: string; callLog?: AwsCallLog } {
  const callLogDir = opts.awsCallLog ?? process.env.STRATUS_AWS_CALL_LOG;
  return callLogDir ? { callLogDir, callLog: createAwsCallLog(callLogDir) } : {};
}

/**
 * A failed asynchronous invocation is logged and kept, as the deployed functions' on-failure
 * destination keeps it; those a killed process left running are kept as failed at start.
 */
function asyncFailures(dataDir: string) {
  const failures = createAsyncFailureStore(path.join(dataDir, 'async-failures'), (name) => `arn:aws:lambda:us-east-1:${LOCAL_ACCOUNT}:function:${name}`);
  failures.recoverInterrupted();
  const watch: AsyncInvocationWatch = {
    begin(name, event) {
      const watched = failures.watch.begin(name, event);
      return {
        done: watched.done,
        failed(err) {
          logError({ msg: 'asynchronous invocation failed', function: name, error: String(err) });
          watched.failed(err);
        },
      };
    },
  };
  return { list: failures.list, store: failures.store, watch };
}

const logError = (fields: Record<string, unknown>) => process.stderr.write(`${JSON.stringify({ level: 'error', ...fields })}\n`);

/**
 * The runner function is tenant-isolated, as in AWS: one process per tenant id (= workspace id,
 * functions/runner-client/runner-tenant.ts), each with its own folder, removed when the process
 * ends as Lambda discards an environment's /tmp. Leftovers of a previous run go too.
 */
function startRunnerPool(opts: LocalStackOptions, s3Endpoint: string, stackEndpoints: readonly string[], awsCallLog: string | undefined): TenantWorkerPool {
  const tenantsDir = path.join(opts.dataDir, 'runner', 'tenants');
  rmSync(tenantsDir, { recursive: true, force: true });
  const runnerDirFor = (tenantId: string) => path.join(tenantsDir, tenantFolder(tenantId));
  return createTenantWorkerPool({
    entry: fileURLToPath(new URL('./runner-worker.ts', import.meta.url)),
    init: (tenantId): RunnerWorkerInit => ({
      rootDir: runnerDirFor(tenantId),
      s3Endpoint,
      region: 'us-east-1',
      stackEndpoints: [...stackEndpoints],
      ...(opts.settings?.egress === 'mailbox' ? { egress: 'mailbox' as const } : {}),
      ...(awsCallLog ? { awsCallLog: { dir: awsCallLog, functionName: RUNNER_FUNCTION } } : {}),
    }),
    maxWorkers: opts.runnerProcesses?.max,
    idleMs: opts.runnerProcesses?.idleMs,
    onWorkerGone: (tenantId) => rm(runnerDirFor(tenantId), { recursive: true, force: true }),
    onCrash: (info) => logError({ msg: 'runner process exited', tenant: info.tenantId, pid: info.pid, code: info.code, signal: info.signal }),
  });
}

function localConfig(
  opts: LocalStackOptions,
  endpoints: { dynamodb: string; s3: string; lambda: string },
  credentials: LocalCredentials,
  apiTokens: Record<string, string>,
  model: ScriptedModelServer | undefined,
  stackEndpoints: readonly string[],
): StratusConfig {
  const shared = sharedConfig(opts.settings ?? { model: {}, turn: {}, api: {}, observability: {} });
  // Locally, webhook deliveries go to the in-process worker whatever the environment names.
  const { workerFunction: _worker, ...sharedGithub } = shared.github;
  return configSchema.parse({
    region: opts.bedrock?.region ?? 'us-east-1',
    tables: tableNames('stratus'),
    bucket: LOCAL_BUCKET,
    runnerFunction: RUNNER_FUNCTION,
    selfFunction: API_FUNCTION,
    endpoints: { ...endpoints, ...(model && opts.scriptedProvider === 'bedrock' ? { bedrock: model.url } : {}) },
    localCredentials: { ...credentials },
    ...shared,
    model: localModel(opts, shared.model, model),
    apiTokens,
    // No platform deadline locally: a turn checkpoints only under STRATUS_INVOCATION_BUDGET_MS, at its very end.
    turn: { leaseMs: 60_000, checkpointMarginMs: 0, ...shared.turn, ...opts.turn },
    ...(opts.budgets ? { budgets: opts.budgets } : {}),
    ...(opts.modelPrices ? { modelPrices: opts.modelPrices } : {}),
    context: { ...opts.context },
    api: { ...shared.api, ...opts.api },
    logLevel: opts.logLevel ?? shared.logLevel ?? 'warn',
    // On a fixed port the console's address is known up front: progress comments link to it.
    github: {
      ...(opts.port ? { consoleUrl: `http://127.0.0.1:${opts.port}/console/` } : {}),
      ...sharedGithub,
      ...opts.github,
      workerFunction: GITHUB_WORKER_FUNCTION,
    },
    observability: { service: 'stratus-local', ...shared.observability, ...opts.observability },
    outbound: { ...shared.outbound, ownEndpoints: [...stackEndpoints] },
  });
}

/**
 * The real model API when a key is given, Bedrock, or the scripted server speaking either
 * protocol; options win over the environment's settings.
 */
function localModel(opts: LocalStackOptions, sharedModel: ReturnType<typeof sharedConfig>['model'], scripted: ScriptedModelServer | undefined) {
  const { apiKey: _key, baseURL: _url, name: _name, provider: _provider, ...settings } = sharedModel;
  if (opts.anthropic) return { apiKey: opts.anthropic.apiKey, baseURL: opts.anthropic.baseURL, name: opts.anthropic.model, ...settings, ...opts.model };
  if (opts.bedrock) return { provider: 'bedrock' as const, name: opts.bedrock.model, ...settings, ...opts.model };
  // The scripted server is on loopback: back off in milliseconds, not seconds (a test that runs dry fails fast).
  if (opts.scriptedProvider === 'bedrock') return { provider: 'bedrock' as const, retryBaseDelayMs: 1, ...settings, ...opts.model };
  return { apiKey: 'scripted-model', baseURL: scripted!.url, retryBaseDelayMs: 1, ...settings, ...opts.model };
}

type App = ReturnType<typeof createApp>;

/**
 * The same Hono app that runs on Lambda, served on loopback. The server listens before the app
 * exists (`serve` hands it over); until then it answers 503. Each request, its streamed body
 * included, runs as the API function (aws-call-log.ts).
 */
async function startApiServer(port: number | undefined): Promise<{ url: string; serve(app: App): void; close(): Promise<void> }> {
  let app: App | undefined;
  const starting = () => new Response('Stratus is starting.', { status: 503 });
  const asApi = ((options: object, listener: (...args: unknown[]) => void) =>
    createServer(options, (req, res) => runAsFunction(API_FUNCTION, () => listener(req, res)))) as unknown as typeof createServer;
  const server = serve({
    fetch: (req, env) => (app ? app.fetch(req, env) : starting()),
    port: port ?? 0,
    hostname: '127.0.0.1',
    createServer: asApi,
  }) as Server;
  await new Promise<void>((resolve) => (server.listening ? resolve() : server.once('listening', () => resolve())));
  const address = server.address();
  return { url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : port}`, serve: (a) => (app = a), close: () => closeServer(server) };
}

function modelUrl(config: StratusConfig): string {
  if (config.model.provider === 'bedrock') return config.endpoints.bedrock ?? `https://bedrock-runtime.${config.region}.amazonaws.com`;
  return config.model.baseURL ?? 'https://api.anthropic.com';
}

async function stopAll(stops: (() => Promise<void>)[]): Promise<void> {
  for (const stop of stops.reverse()) await stop().catch(() => undefined);
  stops.length = 0;
}

/** A folder name for a tenant id: the id itself when it is a plain name (workspace ids are), else a hash. */
function tenantFolder(tenantId: string): string {
  return /^[A-Za-z0-9_-]{1,128}$/.test(tenantId) ? tenantId : `t-${createHash('sha256').update(tenantId).digest('hex').slice(0, 32)}`;
}

/** A token generated once per data folder, so the printed token keeps working across restarts. */
function defaultToken(dataDir: string, name = 'api-token'): string {
  const file = path.join(dataDir, name);
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const token = `stratus_${randomBytes(24).toString('base64url')}`;
  writeFileSync(file, `${token}\n`, { mode: 0o600 });
  return token;
}
