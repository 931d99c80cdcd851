import { z } from 'zod';
import { DEFAULT_MODELS, MODEL_PROVIDERS } from '../model/model-names.ts';
import { permissionModeSchema, ruleListsSchema } from '../permissions/types.ts';
import { budgetsSchema, DEFAULT_MAX_MODEL_CALLS_PER_TURN } from '../stores/budgets.ts';
import { DEFAULT_PRICES, modelPriceSchema } from '../model/pricing.ts';
import { TABLE_KEYS, tableNamesFromEnv } from '../stores/tables.ts';

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
  /** Author and committer of the commits the harness makes. */
  commitAuthor: z.object({ name: z.string().min(1), email: z.string().min(1) }).default({ name: 'Stratus', email: 'stratus@users.noreply.github.com' }),
});

export type GithubConfig = z.output<typeof githubConfigSchema>;

/**
 * The GitHub settings from the environment: STRATUS_GITHUB_WEBHOOK_SECRET, STRATUS_GITHUB_APP_ID
 * + STRATUS_GITHUB_APP_PRIVATE_KEY (PEM) or STRATUS_GITHUB_TOKEN, STRATUS_GITHUB_API_URL,
 * STRATUS_GITHUB_WORKER_FUNCTION, STRATUS_GITHUB_COMMIT_AUTHOR ("Name <email>").
 */
export function githubConfigFromEnv(env: NodeJS.ProcessEnv): z.input<typeof githubConfigSchema> {
  const author = /^(.+?)\s*<([^>]+)>$/.exec(env.STRATUS_GITHUB_COMMIT_AUTHOR ?? '');
  return {
    webhookSecret: env.STRATUS_GITHUB_WEBHOOK_SECRET || undefined,
    appId: env.STRATUS_GITHUB_APP_ID || undefined,
    privateKey: env.STRATUS_GITHUB_APP_PRIVATE_KEY || undefined,
    token: env.STRATUS_GITHUB_TOKEN || undefined,
    apiUrl: env.STRATUS_GITHUB_API_URL || undefined,
    workerFunction: env.STRATUS_GITHUB_WORKER_FUNCTION || undefined,
    ...(author ? { commitAuthor: { name: author[1]!, email: author[2]! } } : {}),
  };
}

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
  /** The API function itself: long turns continue in an asynchronous invocation of it. */
  selfFunction: z.string(),
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
   * How the sandbox reaches allow-listed domains (sandbox-runner/isolation/egress-mode.ts):
   * `direct` (local: the runner enforces the list itself), `proxy` (AWS with the egress proxy;
   * requests carry signed tokens) or `none` (AWS default: sessions with allowedDomains and git
   * imports are refused up front).
   */
  egress: z.enum(['direct', 'proxy', 'none']).default('direct'),
  /** Budgets of sessions that set none: for every tenant, then per tenant id (functions/agent/budget.ts). */
  budgets: z
    .object({ defaults: budgetsSchema.default({}), tenants: z.record(z.string(), budgetsSchema).default({}) })
    .default({ defaults: {}, tenants: {} }),
  /** Model-name prefix → USD per million tokens; entries replace the built-in table's (functions/model/pricing.ts). */
  modelPrices: z
    .record(z.string(), modelPriceSchema)
    .default({})
    .transform((overrides) => ({ ...DEFAULT_PRICES, ...overrides })),
  /** Most concurrency-safe tool calls run at once. */
  maxToolConcurrency: z.number().int().min(1).max(100).default(10),
  /** GitHub issue fixing (functions/github); without a webhook secret the webhook route answers 404. */
  github: githubConfigSchema.prefault({}),
});

export type StratusConfig = z.output<typeof configSchema>;
export type StratusConfigInput = z.input<typeof configSchema>;

/**
 * Reads the configuration from environment variables:
 * STRATUS_{SESSIONS,MESSAGES,EVENTS,SCHEDULES,APPROVALS}_TABLE (one per table in
 * functions/stores/tables.ts), STRATUS_BUCKET, STRATUS_RUNNER_FUNCTION,
 * STRATUS_{DYNAMODB,S3,LAMBDA}_ENDPOINT, ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, STRATUS_MODEL,
 * STRATUS_API_TOKENS ("token=tenant,token2=tenant2"), STRATUS_MAX_MODEL_CALLS, STRATUS_LEASE_MS,
 * STRATUS_SELF_FUNCTION (default AWS_LAMBDA_FUNCTION_NAME), STRATUS_CHECKPOINT_MARGIN_MS, STRATUS_INVOCATION_BUDGET_MS,
 * STRATUS_SCHEDULE_GROUP + STRATUS_CRON_FUNCTION_ARN + STRATUS_SCHEDULER_ROLE_ARN (EventBridge Scheduler),
 * STRATUS_FALLBACK_MODEL, STRATUS_CONTEXT_WINDOW, STRATUS_EGRESS, STRATUS_BUDGETS and
 * STRATUS_TENANT_BUDGETS (JSON budgets), STRATUS_MODEL_PRICES (JSON price entries), and the
 * STRATUS_GITHUB_* settings (`githubConfigFromEnv`),
 * STRATUS_FALLBACK_MODEL, STRATUS_CONTEXT_WINDOW, STRATUS_EGRESS, STRATUS_MODEL_PROVIDER (anthropic | bedrock),
 * STRATUS_BEDROCK_ENDPOINT (a Bedrock Runtime stand-in; unset in AWS), STRATUS_STAGE,
 * POWERTOOLS_SERVICE_NAME, POWERTOOLS_METRICS_NAMESPACE, POWERTOOLS_LOGGER_SAMPLE_RATE.
 */
export function configFromEnv(env: NodeJS.ProcessEnv): StratusConfig {
  const num = (v: string | undefined) => (v === undefined || v === '' ? undefined : Number(v));
  return configSchema.parse({
    region: env.AWS_REGION,
    tables: tableNamesFromEnv(env),
    bucket: env.STRATUS_BUCKET,
    runnerFunction: env.STRATUS_RUNNER_FUNCTION,
    selfFunction: env.STRATUS_SELF_FUNCTION || env.AWS_LAMBDA_FUNCTION_NAME,
    endpoints: {
      dynamodb: env.STRATUS_DYNAMODB_ENDPOINT,
      s3: env.STRATUS_S3_ENDPOINT,
      lambda: env.STRATUS_LAMBDA_ENDPOINT,
      bedrock: env.STRATUS_BEDROCK_ENDPOINT || undefined,
    },
    scheduler: env.STRATUS_SCHEDULE_GROUP
      ? { groupName: env.STRATUS_SCHEDULE_GROUP, targetArn: env.STRATUS_CRON_FUNCTION_ARN, roleArn: env.STRATUS_SCHEDULER_ROLE_ARN }
      : undefined,
    model: {
      provider: env.STRATUS_MODEL_PROVIDER || undefined,
      apiKey: env.ANTHROPIC_API_KEY || undefined,
      baseURL: env.ANTHROPIC_BASE_URL || undefined,
      name: env.STRATUS_MODEL || undefined,
      fallbackName: env.STRATUS_FALLBACK_MODEL || undefined,
      contextWindow: num(env.STRATUS_CONTEXT_WINDOW),
    },
    apiTokens: parseTokens(env.STRATUS_API_TOKENS ?? ''),
    turn: {
      maxModelCalls: num(env.STRATUS_MAX_MODEL_CALLS),
      leaseMs: num(env.STRATUS_LEASE_MS),
      heartbeatMs: num(env.STRATUS_HEARTBEAT_MS),
      checkpointMarginMs: num(env.STRATUS_CHECKPOINT_MARGIN_MS),
      invocationBudgetMs: num(env.STRATUS_INVOCATION_BUDGET_MS),
    },
    logLevel: env.STRATUS_LOG_LEVEL || undefined,
    observability: {
      stage: env.STRATUS_STAGE || undefined,
      service: env.POWERTOOLS_SERVICE_NAME || undefined,
      namespace: env.POWERTOOLS_METRICS_NAMESPACE || undefined,
      logSampleRate: num(env.POWERTOOLS_LOGGER_SAMPLE_RATE),
    },
    maxToolConcurrency: num(env.STRATUS_MAX_TOOL_CONCURRENCY),
    egress: env.STRATUS_EGRESS || undefined,
    budgets: { defaults: jsonVar(env, 'STRATUS_BUDGETS'), tenants: jsonVar(env, 'STRATUS_TENANT_BUDGETS') },
    modelPrices: jsonVar(env, 'STRATUS_MODEL_PRICES'),
    permissions: env.STRATUS_PERMISSION_MODE ? { defaultMode: env.STRATUS_PERMISSION_MODE } : undefined,
    github: githubConfigFromEnv(env),
  });
}

/**
 * The budget and price settings alone (STRATUS_BUDGETS, STRATUS_TENANT_BUDGETS,
 * STRATUS_MODEL_PRICES), for the local stack's options; the prices are the overrides only.
 */
export function budgetSettingsFromEnv(env: NodeJS.ProcessEnv): { budgets: StratusConfig['budgets']; modelPrices: Record<string, z.output<typeof modelPriceSchema>> } {
  return {
    budgets: configSchema.shape.budgets.parse({ defaults: jsonVar(env, 'STRATUS_BUDGETS'), tenants: jsonVar(env, 'STRATUS_TENANT_BUDGETS') }),
    modelPrices: z.record(z.string(), modelPriceSchema).default({}).parse(jsonVar(env, 'STRATUS_MODEL_PRICES')),
  };
}

/** A JSON-valued variable; a value that does not parse is a start-up error naming it. */
function jsonVar(env: NodeJS.ProcessEnv, name: string): unknown {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return undefined;
  try {
    return JSON.parse(raw);
  } catch (err) {
    throw new Error(`${name}: not valid JSON (${(err as Error).message})`);
  }
}

export function parseTokens(spec: string): Record<string, string> {
  const tokens: Record<string, string> = {};
  for (const pair of spec.split(',').map((s) => s.trim()).filter(Boolean)) {
    const eq = pair.lastIndexOf('=');
    if (eq <= 0) throw new Error(`STRATUS_API_TOKENS: expected "token=tenant" pairs, got "${pair}"`);
    tokens[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return tokens;
}
