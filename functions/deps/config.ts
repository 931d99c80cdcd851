import { z } from 'zod';
import { toolSearchModeSchema } from '../session-settings/mcp-config.ts';
import { DEFAULT_MODELS, MODEL_PROVIDERS } from '../model/model-names.ts';
import { permissionModeSchema, ruleListsSchema } from '../permissions/types.ts';
import { budgetsSchema, DEFAULT_MAX_MODEL_CALLS_PER_TURN } from '../stores/budgets.ts';
import { DEFAULT_PRICES, modelPriceSchema } from '../model/pricing.ts';
import { TABLE_KEYS, tableNamesFromEnv } from '../stores/tables.ts';
import { parsePrivateNetworkEntry, PRIVATE_NETWORK_ENTRY_HINT } from '../outbound/private-network-allow.ts';
import { allowListEntrySchema } from '../../sandbox-runner/common/network-allow-list.ts';
import { DEFAULT_SETUP_REGISTRIES } from '../session-settings/setup-registries.ts';
import { MAX_SETUP_TIMEOUT_SECONDS } from '../session-settings/setup-settings.ts';
import { defined, settingsFromEnv, type EnvSettings } from './settings.ts';
import { DEFAULT_ENVIRONMENT_MAX_BYTES } from '../../sandbox-runner/common/environment-rules.ts';

/** The GitHub integration: how webhooks are verified and how Stratus authenticates to GitHub. */
export const githubConfigSchema = z.object({
  /** The webhook's HMAC secret (`X-Hub-Signature-256`). */
  webhookSecret: z.string().min(1).optional(),
  /** A GitHub App (preferred: installation tokens narrowed to one repository per run)... */
  appId: z.string().min(1).optional(),
  privateKey: z.string().min(1).optional(),
  /** ...or one token for small setups. */
  token: z.string().min(1).optional(),
  /** REST API root: GitHub Enterprise and the tests point it elsewhere. */
  apiUrl: z.string().url().default('https://api.github.com'),
  /** The function webhook deliveries are handed to with an asynchronous invocation. */
  workerFunction: z.string().min(1).optional(),
  /** The web console's address (`https://HOST/console/`): progress comments link each session id to its page. */
  consoleUrl: z.string().url().optional(),
  /** Author and committer of the commits the harness makes. */
  commitAuthor: z.object({ name: z.string().min(1), email: z.string().min(1) }).default({ name: 'Stratus', email: 'stratus@users.noreply.github.com' }),
  /** How many days the delivery log (`GET /v1/github/deliveries`) keeps each delivery. */
  deliveryLogDays: z.number().int().min(1).max(400).default(30),
});

/**
 * Everything configurable, parsed once from the environment by a composition root. Only
 * endpoints and credentials differ between AWS and the local stack.
 */
export const configSchema = z.object({
  region: z.string().default('us-east-1'),
  /** Every table's name, by its key in functions/stores/tables.ts (all required). */
  tables: z.record(z.enum(TABLE_KEYS), z.string()),
  bucket: z.string(),
  runnerFunction: z.string(),
  /**
   * The git function (AWS, with GitHub issue fixing): the runner image outside the runner's VPC,
   * serving only the harness's git_checkout and git_publish. Unset: the runner serves them.
   */
  gitFunction: z.string().optional(),
  /** The API function itself: long turns continue in an asynchronous invocation of it. */
  selfFunction: z.string(),
  /** The async-failures queue (AWS): where the admin's redrive reads failed asynchronous invocations. */
  asyncFailuresQueueUrl: z.string().optional(),
  /** Local stand-ins; unset in AWS. */
  endpoints: z
    .object({ dynamodb: z.string().optional(), s3: z.string().optional(), lambda: z.string().optional(), bedrock: z.string().optional() })
    .default({}),
  /** EventBridge Scheduler wiring (AWS); unset locally, where the in-process scheduler polls. */
  scheduler: z.object({ groupName: z.string(), targetArn: z.string(), roleArn: z.string() }).optional(),
  /** Static credentials for the local stand-ins; unset in AWS (the function's role is used). */
  localCredentials: z.object({ accessKeyId: z.string(), secretAccessKey: z.string() }).optional(),
  model: z
    .object({
      /**
       * `anthropic`: the Messages API with an API key. `bedrock`: Amazon Bedrock with the
       * function's IAM role (no key); `name` and `fallbackName` are Bedrock model or inference
       * profile ids.
       */
      provider: z.enum(MODEL_PROVIDERS).default('anthropic'),
      /** Required with the `anthropic` provider; unused with `bedrock`. */
      apiKey: z.string().optional(),
      /** Another Messages API endpoint (`anthropic` provider only; Bedrock's stand-in is `endpoints.bedrock`). */
      baseURL: z.string().optional(),
      /** Default: the provider's entry in functions/model/model-names.ts. */
      name: z.string().optional(),
      maxTokens: z.number().int().positive().default(16_384),
      /** Used when the primary model stays overloaded after its retries. */
      fallbackName: z.string().optional(),
      /** The model's context window in tokens: auto-compaction triggers below it. */
      contextWindow: z.number().int().positive().default(200_000),
      /** Attempts per model call beyond the first (ours are the only retries: the SDK's are off). */
      maxRetries: z.number().int().nonnegative().default(10),
      /** First backoff delay; it doubles per attempt up to 32 s (a retry-after header wins). */
      retryBaseDelayMs: z.number().int().nonnegative().default(500),
      /** The WebSearch tool (the provider's web search server tool); only the `anthropic` provider has it. */
      webSearch: z.boolean().default(false),
    })
    .refine((m) => m.provider !== 'anthropic' || m.apiKey, { message: 'the anthropic provider needs an API key (ANTHROPIC_API_KEY)', path: ['apiKey'] })
    .transform((m) => ({ ...m, name: m.name ?? DEFAULT_MODELS[m.provider] })),
  /** Bearer token → tenant id. */
  apiTokens: z.record(z.string(), z.string()),
  turn: z
    .object({
      /** The per-turn model-call cap (budget `maxModelCallsPerTurn`) where no tenant default or session budget sets one. */
      maxModelCalls: z.number().int().positive().default(DEFAULT_MAX_MODEL_CALLS_PER_TURN),
      /** A lease not renewed for this long is free to take: a crashed turn blocks its session no longer. */
      leaseMs: z.number().int().positive().default(60_000),
      /**
       * A running turn's heartbeat interval (capped at a third of the lease). A turn that misses
       * HEARTBEATS_BEFORE_DEAD beats is dead: its session is free again within seconds.
       */
      heartbeatMs: z.number().int().positive().default(2_000),
      /** A turn checkpoints and continues elsewhere when less than this remains before the deadline. */
      checkpointMarginMs: z.number().int().nonnegative().default(60_000),
      /**
       * Where the platform gives no deadline (the local stack), pretend each invocation has this
       * many ms, so long-turn continuation runs locally exactly as on Lambda. Unset: no deadline.
       */
      invocationBudgetMs: z.number().int().positive().optional(),
    })
    .default({ maxModelCalls: DEFAULT_MAX_MODEL_CALLS_PER_TURN, leaseMs: 60_000, heartbeatMs: 2_000, checkpointMarginMs: 60_000 }),
  /** The context economy: persisted results, the replacement budget, compaction. */
  context: z
    .object({
      /** Global cap on an inline tool result (chars). */
      defaultMaxResultSizeChars: z.number().int().positive().default(50_000),
      /** Tool name → persistence threshold (chars); wins over the tool's value and the cap (never over Infinity). */
      persistThresholdOverrides: z.record(z.string(), z.number().positive()).default({}),
      /** Aggregate budget for the tool results of one API-level user message (chars). */
      perMessageBudgetChars: z.number().int().positive().default(200_000),
      autoCompact: z.boolean().default(true),
      /** Auto-compaction triggers at this many tokens below the effective window. */
      autoCompactBufferTokens: z.number().int().nonnegative().default(13_000),
      /** Recent API messages kept verbatim after a compaction. */
      keepRecentMessages: z.number().int().nonnegative().default(6),
      /** Micro-compaction clears old tool results past this share of the auto-compact threshold. */
      microCompactRatio: z.number().positive().max(1).default(0.8),
      /** Most recent compactable tool results micro-compaction keeps. */
      microCompactKeepRecent: z.number().int().positive().default(5),
    })
    .prefault({}),
  /** What every session is told about its project (functions/agent/project-context.ts, docs/context.md). */
  projectContext: z
    .object({
      /** The operator's text, appended to Stratus's system prompt for every session (STRATUS_SYSTEM_PROMPT_APPEND). */
      systemPromptAppend: z.string().optional(),
      /** Characters of one instructions file that are sent; the rest is cut, with a note (STRATUS_INSTRUCTIONS_MAX_FILE_CHARS). */
      maxFileChars: z.number().int().positive().max(1_000_000).default(40_000),
      /** Characters of all instructions together (tenant, repository, files); later files are cut, with a note (STRATUS_INSTRUCTIONS_MAX_CHARS). */
      maxTotalChars: z.number().int().positive().max(2_000_000).default(120_000),
      /** Levels of `@path` imports followed below a file read in its own right. */
      maxImportDepth: z.number().int().min(1).max(10).default(5),
    })
    .prefault({}),
  logLevel: z.enum(['debug', 'info', 'warn', 'error']).default('info'),
  /** Logs, metrics and traces (Powertools for AWS Lambda: functions/shared/logger.ts, metrics.ts, tracing.ts). */
  observability: z
    .object({
      /** The `stage` dimension of every metric and key of every log line: dev and prod never mix. */
      stage: z.string().default('local'),
      /** The `service` key and dimension (the function: `stratus-api`, `stratus-cron`). */
      service: z.string().default('stratus'),
      /** CloudWatch metrics namespace. */
      namespace: z.string().default('Stratus'),
      /** Share of invocations (0–1) logged at debug whatever the level. */
      logSampleRate: z.number().min(0).max(1).default(0),
      /** Where OpenTelemetry spans go (OTLP/HTTP, JSON); unset: no OpenTelemetry at all. */
      otlpTracesEndpoint: z.url().optional(),
      otlpHeaders: z.record(z.string(), z.string()).default({}),
    })
    .prefault({}),
  permissions: z
    .object({
      /**
       * The mode of sessions that do not choose one. Every tool runs in the isolated runner, so
       * the default lets calls through; sessions opt into asking with `permissionMode: "default"`.
       */
      defaultMode: permissionModeSchema.default('bypassPermissions'),
      /** Organisation policy rules; they come first and their deny rules bind every session. */
      policy: ruleListsSchema.optional(),
    })
    .default({ defaultMode: 'bypassPermissions' }),
  /**
   * How the sandbox reaches allow-listed domains (sandbox-runner/common/egress-mode.ts):
   * `direct` (local: the runner enforces the list itself), `proxy` (AWS with the egress proxy;
   * requests carry signed tokens), `mailbox` (AWS default: commands' requests go through the
   * workspace's S3 mailbox to the egress forwarder, which checks the grant the harness writes,
   * functions/runner-client/egress-grants.ts; git imports are refused up front) or `none` (no
   * network: sessions with allowedDomains and git imports are refused up front).
   */
  egress: z.enum(['direct', 'proxy', 'mailbox', 'none']).default('direct'),
  /** Budgets of sessions that set none: for every tenant, then per tenant id (functions/agent/budget.ts). */
  budgets: z.object({ defaults: budgetsSchema.default({}), tenants: z.record(z.string(), budgetsSchema).default({}) }).default({ defaults: {}, tenants: {} }),
  /** Model-name prefix → USD per million tokens; entries replace the built-in table's (functions/model/pricing.ts). */
  modelPrices: z
    .record(z.string(), modelPriceSchema)
    .default({})
    .transform((overrides) => ({ ...DEFAULT_PRICES, ...overrides })),
  /** Bytes each tenant may keep stored (functions/stores/tenant-usage.ts says what counts). */
  tenantStorageQuotaBytes: z
    .number()
    .int()
    .positive()
    .default(10 * 1024 ** 3),
  /** Sandbox runner calls one tenant may have in flight at once (functions/runner-client/runner-slot.ts). */
  tenantRunnerCalls: z.number().int().positive().default(20),
  /** Bytes of file content one cached environment layer may hold (docs/workspaces.md, "The cached environment"). */
  environmentMaxBytes: z.number().int().positive().default(DEFAULT_ENVIRONMENT_MAX_BYTES),
  /** Most concurrency-safe tool calls run at once. */
  maxToolConcurrency: z.number().int().min(1).max(100).default(10),
  /** Sessions' remote MCP servers (functions/session-settings): a call that takes longer fails; so does a server that does not connect in time. */
  mcp: z.object({ toolTimeoutMs: z.number().int().positive().default(120_000), connectTimeoutMs: z.number().int().positive().default(30_000) }).prefault({}),
  /**
   * The outbound policy of calls made on a session's behalf (functions/outbound): the operator's
   * non-public destinations (STRATUS_PRIVATE_NETWORK_ALLOW), and the stack's own endpoints
   * beyond `endpoints` that nothing a session configures may call (the local API and model
   * server, Lambda's runtime API).
   */
  outbound: z
    .object({
      privateNetworkAllow: z.array(z.string().refine((e) => parsePrivateNetworkEntry(e) !== undefined, PRIVATE_NETWORK_ENTRY_HINT)).default([]),
      ownEndpoints: z.array(z.string()).default([]),
    })
    .prefault({}),
  /**
   * Set-up steps before a session's first turn (functions/environments/setup-steps.ts): the
   * registries they may reach besides the session's own `allowedDomains`
   * (STRATUS_SETUP_REGISTRIES; the agent's commands never get them) and their time limit where
   * the session sets none (STRATUS_SETUP_TIMEOUT_SECONDS).
   */
  setup: z
    .object({
      registries: z.array(allowListEntrySchema).default([...DEFAULT_SETUP_REGISTRIES]),
      timeoutSeconds: z.number().int().min(1).max(MAX_SETUP_TIMEOUT_SECONDS).default(600),
    })
    .prefault({}),
  /** ToolSearch mode of sessions that choose none (functions/tools/tool-search, docs/tool-pipeline.md): `tst`. */
  toolSearch: z.object({ mode: toolSearchModeSchema.default('tst') }).prefault({}),
  /** The HTTP API's own settings. */
  api: z
    .object({
      /** Origins a browser may call the API from (CORS); `*` for any. Empty: no CORS headers. */
      corsOrigins: z.array(z.string()).default([]),
      /** An SSE stream sends a comment this often while nothing else is due. */
      sseHeartbeatMs: z.number().int().positive().default(15_000),
    })
    .prefault({}),
  /** GitHub issue fixing (functions/github); without a webhook secret the webhook route answers 404. */
  github: githubConfigSchema.prefault({}),
});

export type StratusConfig = z.output<typeof configSchema>;
export type StratusConfigInput = z.input<typeof configSchema>;

/**
 * The Lambda handlers' configuration: the deployment's resources from the environment the CDK
 * app sets — STRATUS_{SESSIONS,MESSAGES,EVENTS,SCHEDULES,APPROVALS}_TABLE (functions/stores/tables.ts),
 * STRATUS_BUCKET, STRATUS_RUNNER_FUNCTION, STRATUS_GIT_FUNCTION (optional), STRATUS_SELF_FUNCTION (default AWS_LAMBDA_FUNCTION_NAME),
 * STRATUS_ASYNC_FAILURES_QUEUE_URL (the API function's, for the redrive),
 * STRATUS_{DYNAMODB,S3,LAMBDA}_ENDPOINT, STRATUS_SCHEDULE_GROUP + STRATUS_CRON_FUNCTION_ARN +
 * STRATUS_SCHEDULER_ROLE_ARN — plus every shared setting, read by `settingsFromEnv` exactly as
 * the local stack reads them (functions/deps/settings.ts lists them: budgets, model prices and
 * the STRATUS_GITHUB_* settings among them).
 */
export function configFromEnv(env: NodeJS.ProcessEnv): StratusConfig {
  const settings = settingsFromEnv(env);
  return configSchema.parse({
    region: env.AWS_REGION,
    tables: tableNamesFromEnv(env),
    bucket: env.STRATUS_BUCKET,
    runnerFunction: env.STRATUS_RUNNER_FUNCTION,
    gitFunction: env.STRATUS_GIT_FUNCTION || undefined,
    selfFunction: env.STRATUS_SELF_FUNCTION || env.AWS_LAMBDA_FUNCTION_NAME,
    asyncFailuresQueueUrl: env.STRATUS_ASYNC_FAILURES_QUEUE_URL || undefined,
    endpoints: {
      dynamodb: env.STRATUS_DYNAMODB_ENDPOINT,
      s3: env.STRATUS_S3_ENDPOINT,
      lambda: env.STRATUS_LAMBDA_ENDPOINT,
      bedrock: env.STRATUS_BEDROCK_ENDPOINT || undefined,
    },
    scheduler: env.STRATUS_SCHEDULE_GROUP
      ? { groupName: env.STRATUS_SCHEDULE_GROUP, targetArn: env.STRATUS_CRON_FUNCTION_ARN, roleArn: env.STRATUS_SCHEDULER_ROLE_ARN }
      : undefined,
    ...sharedConfig(settings),
    // Lambda's runtime API listens on the function's loopback: no hook or MCP server may reach it.
    outbound: { ...settings.outbound, ownEndpoints: env.AWS_LAMBDA_RUNTIME_API ? [env.AWS_LAMBDA_RUNTIME_API] : [] },
    apiTokens: settings.apiTokens ?? {},
  });
}

/** The shared settings as configuration input: unset values keep the schema's defaults. */
export function sharedConfig(settings: EnvSettings) {
  return {
    model: defined(settings.model),
    turn: defined(settings.turn),
    api: defined(settings.api),
    observability: defined(settings.observability ?? {}),
    permissions: settings.permissions,
    github: settings.github ?? {},
    mcp: defined(settings.mcp ?? {}),
    outbound: defined(settings.outbound ?? {}),
    setup: defined(settings.setup ?? {}),
    toolSearch: defined({ mode: settings.toolSearchMode }),
    projectContext: defined(settings.projectContext ?? {}),
    ...defined({
      maxToolConcurrency: settings.maxToolConcurrency,
      tenantStorageQuotaBytes: settings.tenantStorageQuotaBytes,
      tenantRunnerCalls: settings.tenantRunnerCalls,
      environmentMaxBytes: settings.environmentMaxBytes,
      logLevel: settings.logLevel,
      egress: settings.egress,
      budgets: settings.budgets,
      modelPrices: settings.modelPrices,
    }),
  };
}
