import { z } from 'zod';
import { modelPriceSchema, type ModelPrice } from '../model/pricing.ts';
import { permissionModeSchema } from '../permissions/types.ts';
import { budgetsSchema, type Budgets } from '../stores/budgets.ts';
import { parsePrivateNetworkEntry, PRIVATE_NETWORK_ALLOW_SETTING, PRIVATE_NETWORK_ENTRY_HINT } from '../outbound/private-network-allow.ts';
import { ALLOW_LIST_ENTRY_HINT, parseAllowListEntry } from '../../sandbox-runner/common/network-allow-list.ts';
import { SETUP_REGISTRIES_SETTING } from '../session-settings/setup-registries.ts';
import { MAX_SETUP_TIMEOUT_SECONDS } from '../session-settings/setup-settings.ts';

/**
 * The settings both the local stack (`npm start`) and the Lambda handlers read from the
 * environment, in one table: each variable's meaning, default and parser. A malformed value is
 * a start-up error naming the variable. `where: 'aws'` marks what only a deployment uses (the
 * CDK app sets those); `'local'` what only `npm start` uses.
 */
export interface Setting {
  name: string;
  meaning: string;
  default: string;
  where: 'both' | 'aws' | 'local';
}

/** Every variable, for `npm start -- --help` and the README's table. */
export const SETTINGS: Setting[] = [
  { name: 'PORT', meaning: 'API port (`0` = any free port)', default: '8787 (`npm run demo:github`: any free port)', where: 'local' },
  { name: 'STRATUS_DYNAMODB_PORT', meaning: 'port of the DynamoDB stand-in (`0` = any free port); printed at start', default: '0', where: 'local' },
  { name: 'STRATUS_S3_PORT', meaning: 'port of the S3 stand-in (`0` = any free port); printed at start', default: '0', where: 'local' },
  {
    name: 'STRATUS_LAMBDA_PORT',
    meaning: 'port of the Lambda Invoke stand-in that runs the sandbox runner (`0` = any free port); printed at start',
    default: '0',
    where: 'local',
  },
  {
    name: 'STRATUS_MODEL_PORT',
    meaning: 'port of the scripted model server, when it runs (`0` = any free port); printed at start',
    default: '0',
    where: 'local',
  },
  {
    name: 'STRATUS_DYNAMODB_ENDPOINT',
    meaning:
      'an existing DynamoDB (DynamoDB Local, LocalStack, another `npm start`) to use instead of the stand-in; missing tables are created; the stack signs with `AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY` (docs/local-stack.md)',
    default: 'unset: the stand-in',
    where: 'local',
  },
  {
    name: 'STRATUS_S3_ENDPOINT',
    meaning: 'an existing S3 to use instead of the stand-in; the bucket `stratus-local` is created (versioned) if missing',
    default: 'unset: the stand-in',
    where: 'local',
  },
  {
    name: 'STRATUS_LAMBDA_ENDPOINT',
    meaning:
      'an existing Lambda Invoke endpoint serving `stratus-tenant-runner`, `stratus-api` and `stratus-github-worker` (another `npm start`) instead of the stand-in',
    default: 'unset: the stand-in',
    where: 'local',
  },
  { name: 'STRATUS_DATA_DIR', meaning: 'data folder for the local stack', default: './.stratus-data', where: 'local' },
  {
    name: 'STRATUS_API_TOKENS',
    meaning:
      '`token=tenant,token2=tenant2`: fixed bearer tokens and the tenant each sees; a pair `token=@admin` is the admin token of `/v1/admin` (it makes and revokes hashed tenant tokens without a redeploy, and assigns GitHub App installations to tenants) (AWS: in the tokens secret)',
    default: 'local: a tenant token in `<data>/api-token` (tenant `local`) and an admin token in `<data>/admin-token`',
    where: 'both',
  },
  { name: 'ANTHROPIC_API_KEY', meaning: 'use the real Anthropic API (AWS: in the key secret)', default: 'local: unset → the scripted model', where: 'both' },
  { name: 'ANTHROPIC_BASE_URL', meaning: 'a compatible endpoint', default: "Anthropic's", where: 'both' },
  {
    name: 'STRATUS_MODEL_PROVIDER',
    meaning: "`anthropic` (the Messages API) or `bedrock` (Amazon Bedrock with the AWS credential chain / the function's role, region `AWS_REGION`)",
    default: 'anthropic',
    where: 'both',
  },
  {
    name: 'STRATUS_MODEL',
    meaning: 'the model (Bedrock: a model or inference profile id)',
    default: 'claude-sonnet-5-5 (Bedrock: global.anthropic.claude-sonnet-5-5)',
    where: 'both',
  },
  { name: 'STRATUS_FALLBACK_MODEL', meaning: 'the model to switch to when the first stays overloaded', default: 'none', where: 'both' },
  {
    name: 'STRATUS_WEB_SEARCH',
    meaning:
      "`on` offers the WebSearch tool, the provider's web search server tool, priced per search in the budgets (`perWebSearch` of the price table); never with the `bedrock` provider, which lacks it (docs/tools.md)",
    default: 'off',
    where: 'both',
  },
  { name: 'STRATUS_CONTEXT_WINDOW', meaning: "the model's window in tokens, for auto-compaction", default: '200000', where: 'both' },
  {
    name: 'STRATUS_MAX_MODEL_CALLS',
    meaning: 'per-turn model-call cap (budget `maxModelCallsPerTurn` where nothing else sets one)',
    default: '400',
    where: 'both',
  },
  {
    name: 'STRATUS_PERMISSION_MODE',
    meaning: 'mode of sessions that choose none: `default`, `acceptEdits`, `plan`, `bypassPermissions`, `dontAsk`',
    default: 'bypassPermissions',
    where: 'both',
  },
  { name: 'STRATUS_MAX_TOOL_CONCURRENCY', meaning: 'concurrency-safe tool calls run at once (1–100)', default: '10', where: 'both' },
  {
    name: 'STRATUS_TOOL_SEARCH',
    meaning:
      'ToolSearch mode of sessions that set none: `tst` (defer MCP tools behind ToolSearch), `tst-auto` (only when their schemas take ≥ 10 % of the context window) or `standard` (never)',
    default: 'tst',
    where: 'both',
  },
  { name: 'STRATUS_MCP_TOOL_TIMEOUT_MS', meaning: 'an MCP `tools/call` that takes longer becomes an error result', default: '120000', where: 'both' },
  { name: 'STRATUS_MCP_CONNECT_TIMEOUT_MS', meaning: 'connecting to an MCP server and listing its tools', default: '30000', where: 'both' },
  {
    name: PRIVATE_NETWORK_ALLOW_SETTING,
    meaning:
      "non-public destinations sessions may reach, comma-separated: `allowedDomains` entries (`mcp.internal.example`, `127.0.0.1:9000`) and CIDRs (`10.0.0.0/8`, every port). Hooks and MCP servers may call them (plain `http://` only to a host named here), and sessions may list such IP literals in `allowedDomains`; the stack's own endpoints stay unreachable (docs/security.md, outbound calls)",
    default: 'none: only public addresses',
    where: 'both',
  },
  {
    name: SETUP_REGISTRIES_SETTING,
    meaning:
      "the hosts set-up steps may reach besides a session's own `allowedDomains`, comma-separated `allowedDomains` entries replacing the built-in list of package registries (`none`: no registries); a non-public IP literal also needs `STRATUS_PRIVATE_NETWORK_ALLOW`. Agent commands never get them (docs/environments.md)",
    default: 'npm, PyPI, crates.io, the Go proxy, Maven Central, RubyGems, Debian/Ubuntu, GitHub codeload/objects (`DEFAULT_SETUP_REGISTRIES`)',
    where: 'both',
  },
  {
    name: 'STRATUS_SETUP_TIMEOUT_SECONDS',
    meaning: "time limit of a session's set-up steps where its `setup.timeoutSeconds` sets none (1–840)",
    default: '600',
    where: 'both',
  },
  {
    name: 'STRATUS_SYSTEM_PROMPT_APPEND',
    meaning: "text appended to Stratus's system prompt for every session, before a tenant's own `systemPromptAppend` (docs/context.md)",
    default: 'none',
    where: 'both',
  },
  {
    name: 'STRATUS_INSTRUCTIONS_MAX_FILE_CHARS',
    meaning:
      'characters of one instructions file (CLAUDE.md, AGENTS.md, an import, a nested one) sent to the model; the rest is cut with a note saying so (docs/context.md)',
    default: '40000',
    where: 'both',
  },
  {
    name: 'STRATUS_INSTRUCTIONS_MAX_CHARS',
    meaning: "characters of all instructions of a turn together (tenant, repository, the project's files); files past it are cut or left out with a note",
    default: '120000',
    where: 'both',
  },
  { name: 'STRATUS_LEASE_MS', meaning: 'the longest a crashed turn (or a lost continuation) keeps its session locked', default: '60000', where: 'both' },
  { name: 'STRATUS_HEARTBEAT_MS', meaning: "a running turn's heartbeat; after three missed beats the turn counts as crashed", default: '2000', where: 'both' },
  {
    name: 'STRATUS_CHECKPOINT_MARGIN_MS',
    meaning: 'a turn continues in a fresh invocation when less than this remains before the deadline',
    default: 'AWS 60000, local 0',
    where: 'both',
  },
  {
    name: 'STRATUS_INVOCATION_BUDGET_MS',
    meaning: 'where the platform gives no deadline (locally), pretend each invocation has this many ms',
    default: 'unset',
    where: 'both',
  },
  {
    name: 'STRATUS_CORS_ORIGINS',
    meaning: 'origins a browser may call the API from, comma-separated (`*` for any)',
    default: 'none (no CORS headers)',
    where: 'both',
  },
  { name: 'STRATUS_SSE_HEARTBEAT_MS', meaning: 'an SSE stream sends a `: heartbeat` comment this often while quiet', default: '15000', where: 'both' },
  {
    name: 'STRATUS_BUDGETS',
    meaning: 'JSON budgets of every session that sets none, e.g. `{"maxCostUsd":5,"maxWallSecondsPerTurn":1800}` (docs/turns.md, budgets)',
    default: 'none (400 model calls per turn)',
    where: 'both',
  },
  {
    name: 'STRATUS_TENANT_BUDGETS',
    meaning: 'JSON budgets per tenant id, over `STRATUS_BUDGETS`: `{"acme":{"maxTurns":100}}`',
    default: 'none',
    where: 'both',
  },
  {
    name: 'STRATUS_MODEL_PRICES',
    meaning:
      'JSON USD per million tokens by model-name prefix, adding to or replacing the built-in list prices: `{"my-model":{"inputPerMTok":1,"outputPerMTok":5,"cacheReadPerMTok":0.1,"cacheWritePerMTok":1.25}}`',
    default: "Anthropic's list prices",
    where: 'both',
  },
  {
    name: 'STRATUS_TENANT_RUNNER_CALLS',
    meaning:
      "sandbox runner calls one tenant may have in flight at once, across every API instance (the runner function's reserved concurrency is the account-wide bound); past it a turn's tool call waits up to 60 s for a free slot, then gets an is_error result, and an API request that needs the runner gets 429 `runner_calls_limit` with `Retry-After`",
    default: '20',
    where: 'both',
  },
  {
    name: 'STRATUS_TENANT_STORAGE_QUOTA_BYTES',
    meaning:
      'bytes a tenant may keep stored: workspace versions its sessions published and archive uploads waiting to be imported (docs/workspaces.md, storage quota); past it an upload, import or write is refused with 413 `storage_quota`',
    default: '10737418240 (10 GiB)',
    where: 'both',
  },
  {
    name: 'STRATUS_ENVIRONMENT_MAX_BYTES',
    meaning:
      'bytes of file content a cached environment (the dependency directories the set-up steps installed, one layer per repository and set-up fingerprint: docs/workspaces.md, the cached environment) may hold; a larger one is not cached, and a stored one past it is not restored',
    default: '2147483648 (2 GiB)',
    where: 'both',
  },
  {
    name: 'STRATUS_GITHUB_WEBHOOK_SECRET',
    meaning: "the GitHub webhook's secret; `POST /v1/github/webhook` answers 404 without it",
    default: 'unset',
    where: 'both',
  },
  {
    name: 'STRATUS_GITHUB_APP_ID',
    meaning: "a GitHub App's id (with `STRATUS_GITHUB_APP_PRIVATE_KEY`): each run gets an installation token narrowed to its repository",
    default: 'unset',
    where: 'both',
  },
  { name: 'STRATUS_GITHUB_APP_PRIVATE_KEY', meaning: "the GitHub App's private key (PEM)", default: 'unset', where: 'both' },
  {
    name: 'STRATUS_GITHUB_TOKEN',
    meaning: 'instead of an App, one token for every repository (small setups; PRs it opens may not trigger CI)',
    default: 'unset',
    where: 'both',
  },
  {
    name: 'STRATUS_GITHUB_API_URL',
    meaning: "GitHub's REST API (GitHub Enterprise: `https://HOST/api/v3`)",
    default: '`https://api.github.com`',
    where: 'both',
  },
  {
    name: 'STRATUS_GITHUB_COMMIT_AUTHOR',
    meaning: "author and committer of Stratus's commits, `Name <email>`",
    default: '`Stratus <stratus@users.noreply.github.com>`',
    where: 'both',
  },
  {
    name: 'STRATUS_CONSOLE_URL',
    meaning: "the web console's address (`https://HOST/console/`); GitHub progress comments link each session id to its console page",
    default: "local: the local console on a fixed `PORT`; AWS: the custom domain's console when `domainName` is set",
    where: 'both',
  },
  {
    name: 'STRATUS_GITHUB_WORKER_FUNCTION',
    meaning: 'the function webhook deliveries are handed to (locally: the in-process worker)',
    default: 'set by the CDK app',
    where: 'aws',
  },
  {
    name: 'STRATUS_GIT_FUNCTION',
    meaning:
      'the git function GitHub runs\' clone and push go to, outside the runner\'s VPC (docs/security.md, "Git and registry traffic at $0 idle"); unset: the runner serves them (locally)',
    default: 'set by the CDK app on the GitHub worker',
    where: 'aws',
  },
  {
    name: 'STRATUS_LOG_LEVEL',
    meaning:
      '`debug`, `info`, `warn`, `error`: Powertools JSON log lines (`level`, `message`, `service`, `stage`, session, turn and tenant ids). Metrics are not logs: in Lambda their EMF lines go to stdout at every level; locally to `<data>/metrics.jsonl`, and to stderr at `debug`',
    default: 'info',
    where: 'both',
  },
  {
    name: 'STRATUS_STAGE',
    meaning: 'the `stage` key of every log line and the `stage` dimension of every metric (namespace `Stratus`)',
    default: 'local (AWS: the stage name)',
    where: 'both',
  },
  { name: 'POWERTOOLS_LOGGER_SAMPLE_RATE', meaning: 'share (0–1) of requests logged at debug whatever the level', default: '0', where: 'both' },
  {
    name: 'STRATUS_OTEL_TRACES_ENDPOINT',
    meaning:
      'an OTLP/HTTP traces URL (JSON), e.g. `http://collector:4318/v1/traces`: each turn, model call, tool call and runner op is exported there as an OpenTelemetry span (docs/architecture.md, traces); in AWS beside X-Ray',
    default: 'unset (off)',
    where: 'both',
  },
  {
    name: 'STRATUS_OTEL_HEADERS',
    meaning: "headers sent with every trace export, comma-separated `name=value` (a collector's auth)",
    default: 'none',
    where: 'both',
  },
  {
    name: 'POWERTOOLS_SERVICE_NAME, POWERTOOLS_METRICS_NAMESPACE',
    meaning: 'the service of logs and metrics, and the metrics namespace',
    default: 'set by the CDK app (local: `stratus-local`, `Stratus`)',
    where: 'aws',
  },
  {
    name: 'STRATUS_EGRESS',
    meaning: 'how sandboxes reach allowed domains: `direct` (local), `proxy`, `none`',
    default: 'AWS: set by the CDK app; local `direct`',
    where: 'aws',
  },
  {
    name: 'AWS_REGION, STRATUS_*_TABLE, STRATUS_BUCKET, STRATUS_RUNNER_FUNCTION, STRATUS_SELF_FUNCTION, STRATUS_SCHEDULE_GROUP, …',
    meaning: "the deployment's resources and secrets (docs/deploy.md)",
    default: 'set by the CDK app',
    where: 'aws',
  },
];

/** The parts of the configuration the environment can set in both places (a partial StratusConfig input). */
export interface EnvSettings {
  apiTokens?: Record<string, string>;
  model: {
    provider?: 'anthropic' | 'bedrock';
    apiKey?: string;
    baseURL?: string;
    name?: string;
    fallbackName?: string;
    contextWindow?: number;
    webSearch?: boolean;
  };
  observability: {
    stage?: string;
    service?: string;
    namespace?: string;
    logSampleRate?: number;
    otlpTracesEndpoint?: string;
    otlpHeaders?: Record<string, string>;
  };
  turn: { maxModelCalls?: number; leaseMs?: number; heartbeatMs?: number; checkpointMarginMs?: number; invocationBudgetMs?: number };
  api: { corsOrigins?: string[]; sseHeartbeatMs?: number };
  permissions?: { defaultMode: string };
  maxToolConcurrency?: number;
  tenantStorageQuotaBytes?: number;
  tenantRunnerCalls?: number;
  environmentMaxBytes?: number;
  toolSearchMode?: 'standard' | 'tst' | 'tst-auto';
  mcp?: { toolTimeoutMs?: number; connectTimeoutMs?: number };
  /** Instructions files and the system prompt (functions/agent/project-context.ts). */
  projectContext?: { systemPromptAppend?: string; maxFileChars?: number; maxTotalChars?: number };
  /** The outbound policy's operator list (functions/outbound). */
  outbound?: { privateNetworkAllow?: string[] };
  /** Set-up steps' registries and default time limit (functions/environments). */
  setup?: { registries?: string[]; timeoutSeconds?: number };
  logLevel?: 'debug' | 'info' | 'warn' | 'error';
  egress?: 'direct' | 'proxy' | 'mailbox' | 'none';
  budgets?: { defaults?: Budgets; tenants?: Record<string, Budgets> };
  /** Price overrides only: the configuration adds the built-in table. */
  modelPrices?: Record<string, ModelPrice>;
  github?: GithubSettings;
}

/** The GitHub integration's settings (functions/deps/config.ts `githubConfigSchema`). */
export interface GithubSettings {
  webhookSecret?: string;
  appId?: string;
  privateKey?: string;
  token?: string;
  apiUrl?: string;
  workerFunction?: string;
  consoleUrl?: string;
  commitAuthor?: { name: string; email: string };
  deliveryLogDays?: number;
}

/** A setting's value is malformed: start-up stops with a message naming the variable. */
export class SettingError extends Error {
  override name = 'SettingError';
}

/** Typed readers of one variable each; a malformed value throws a SettingError naming it. */
function envReader(env: NodeJS.ProcessEnv) {
  const str = (name: string) => (env[name] === undefined || env[name] === '' ? undefined : env[name]);
  const int = (name: string, min: number, max = Number.MAX_SAFE_INTEGER) => {
    const raw = str(name);
    if (raw === undefined) return undefined;
    const n = Number(raw.replaceAll('_', ''));
    if (!/^\s*[\d_]+\s*$/.test(raw) || !Number.isSafeInteger(n) || n < min || n > max) {
      throw new SettingError(
        `${name}: expected a whole number${max === Number.MAX_SAFE_INTEGER ? ` of at least ${min}` : ` from ${min} to ${max}`}, got ${JSON.stringify(raw)}.`,
      );
    }
    return n;
  };
  const oneOf = <T extends string>(name: string, allowed: readonly T[]) => {
    const raw = str(name);
    if (raw === undefined) return undefined;
    if (!allowed.includes(raw as T)) throw new SettingError(`${name}: expected one of ${allowed.join(', ')}, got ${JSON.stringify(raw)}.`);
    return raw as T;
  };
  const url = (name: string) => {
    const raw = str(name);
    if (raw !== undefined && !URL.canParse(raw)) throw new SettingError(`${name}: expected a URL, got ${JSON.stringify(raw)}.`);
    return raw;
  };
  /** A JSON value checked against its schema; the message names the variable and the field. */
  const json = <S extends z.ZodType>(name: string, schema: S): z.output<S> | undefined => {
    const raw = str(name);
    if (raw === undefined || raw.trim() === '') return undefined;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (err) {
      throw new SettingError(`${name}: not valid JSON (${(err as Error).message}).`);
    }
    const parsed = schema.safeParse(value);
    if (!parsed.success)
      throw new SettingError(`${name}: ${parsed.error.issues.map((i) => `${i.path.length ? `"${i.path.join('.')}": ` : ''}${i.message}`).join('; ')}.`);
    return parsed.data;
  };
  return { str, int, oneOf, url, json };
}

type EnvReader = ReturnType<typeof envReader>;

/**
 * Reads every shared setting from the environment. Unset or empty means the default; a value
 * that does not parse throws a SettingError naming the variable and what it expects.
 */
export function settingsFromEnv(env: NodeJS.ProcessEnv): EnvSettings {
  const read = envReader(env);
  const tokens = read.str('STRATUS_API_TOKENS');
  const mode = read.oneOf('STRATUS_PERMISSION_MODE', permissionModeSchema.options);
  return {
    ...(tokens !== undefined ? { apiTokens: parseTokens(tokens) } : {}),
    model: modelSettings(read),
    turn: {
      maxModelCalls: read.int('STRATUS_MAX_MODEL_CALLS', 1),
      leaseMs: read.int('STRATUS_LEASE_MS', 1_000),
      heartbeatMs: read.int('STRATUS_HEARTBEAT_MS', 10),
      checkpointMarginMs: read.int('STRATUS_CHECKPOINT_MARGIN_MS', 0),
      invocationBudgetMs: read.int('STRATUS_INVOCATION_BUDGET_MS', 1_000),
    },
    api: { corsOrigins: corsOrigins(read.str('STRATUS_CORS_ORIGINS')), sseHeartbeatMs: read.int('STRATUS_SSE_HEARTBEAT_MS', 100) },
    ...(mode ? { permissions: { defaultMode: mode } } : {}),
    maxToolConcurrency: read.int('STRATUS_MAX_TOOL_CONCURRENCY', 1, 100),
    tenantStorageQuotaBytes: read.int('STRATUS_TENANT_STORAGE_QUOTA_BYTES', 1),
    tenantRunnerCalls: read.int('STRATUS_TENANT_RUNNER_CALLS', 1, 10_000),
    environmentMaxBytes: read.int('STRATUS_ENVIRONMENT_MAX_BYTES', 1),
    toolSearchMode: read.oneOf('STRATUS_TOOL_SEARCH', ['standard', 'tst', 'tst-auto'] as const),
    mcp: { toolTimeoutMs: read.int('STRATUS_MCP_TOOL_TIMEOUT_MS', 1), connectTimeoutMs: read.int('STRATUS_MCP_CONNECT_TIMEOUT_MS', 1) },
    projectContext: {
      systemPromptAppend: read.str('STRATUS_SYSTEM_PROMPT_APPEND'),
      maxFileChars: read.int('STRATUS_INSTRUCTIONS_MAX_FILE_CHARS', 1, 1_000_000),
      maxTotalChars: read.int('STRATUS_INSTRUCTIONS_MAX_CHARS', 1, 2_000_000),
    },
    outbound: defined({ privateNetworkAllow: privateNetworkAllow(read.str(PRIVATE_NETWORK_ALLOW_SETTING)) }),
    setup: defined({
      registries: setupRegistries(read.str(SETUP_REGISTRIES_SETTING)),
      timeoutSeconds: read.int('STRATUS_SETUP_TIMEOUT_SECONDS', 1, MAX_SETUP_TIMEOUT_SECONDS),
    }),
    logLevel: read.oneOf('STRATUS_LOG_LEVEL', ['debug', 'info', 'warn', 'error'] as const),
    observability: observabilitySettings(read),
    egress: read.oneOf('STRATUS_EGRESS', ['direct', 'proxy', 'mailbox', 'none'] as const),
    ...budgetSettings(read),
    github: githubSettings(read),
  };
}

function modelSettings(read: EnvReader): EnvSettings['model'] {
  return {
    provider: read.oneOf('STRATUS_MODEL_PROVIDER', ['anthropic', 'bedrock'] as const),
    apiKey: read.str('ANTHROPIC_API_KEY'),
    baseURL: read.url('ANTHROPIC_BASE_URL'),
    name: read.str('STRATUS_MODEL'),
    fallbackName: read.str('STRATUS_FALLBACK_MODEL'),
    contextWindow: read.int('STRATUS_CONTEXT_WINDOW', 1_000),
    webSearch: onOff(read.oneOf('STRATUS_WEB_SEARCH', ['on', 'off'] as const)),
  };
}

function onOff(value: 'on' | 'off' | undefined): boolean | undefined {
  return value === undefined ? undefined : value === 'on';
}

/** STRATUS_SETUP_REGISTRIES: `none`, or allow-list entries replacing the built-in registries. */
function setupRegistries(spec: string | undefined): string[] | undefined {
  if (spec === undefined) return undefined;
  if (spec.trim().toLowerCase() === 'none') return [];
  return spec
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean)
    .map((entry) => {
      if (!parseAllowListEntry(entry))
        throw new SettingError(`${SETUP_REGISTRIES_SETTING}: each entry ${ALLOW_LIST_ENTRY_HINT}, got ${JSON.stringify(entry)}.`);
      return entry;
    });
}

function privateNetworkAllow(spec: string | undefined): string[] | undefined {
  return spec
    ?.split(',')
    .map((e) => e.trim())
    .filter(Boolean)
    .map((entry) => {
      if (!parsePrivateNetworkEntry(entry))
        throw new SettingError(`${PRIVATE_NETWORK_ALLOW_SETTING}: ${PRIVATE_NETWORK_ENTRY_HINT}, got ${JSON.stringify(entry)}.`);
      return entry;
    });
}

function sampleRate(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const rate = Number(value);
  if (!Number.isFinite(rate) || rate < 0 || rate > 1) throw new SettingError(`POWERTOOLS_LOGGER_SAMPLE_RATE must be a number from 0 to 1, not "${value}".`);
  return rate;
}

function corsOrigins(spec: string | undefined): string[] | undefined {
  return spec
    ?.split(',')
    .map((o) => o.trim())
    .filter(Boolean)
    .map((o) => {
      if (o !== '*' && !/^https?:\/\/[^/\s]+$/.test(o))
        throw new SettingError(
          `STRATUS_CORS_ORIGINS: expected origins like https://app.example.com (scheme and host, no path) or *, got ${JSON.stringify(o)}.`,
        );
      return o;
    });
}

/** STRATUS_BUDGETS, STRATUS_TENANT_BUDGETS and STRATUS_MODEL_PRICES, checked against the schemas the configuration uses. */
function budgetSettings(read: EnvReader): Pick<EnvSettings, 'budgets' | 'modelPrices'> {
  const defaults = read.json('STRATUS_BUDGETS', budgetsSchema);
  const tenants = read.json('STRATUS_TENANT_BUDGETS', z.record(z.string(), budgetsSchema));
  const modelPrices = read.json('STRATUS_MODEL_PRICES', z.record(z.string(), modelPriceSchema));
  return defined({ budgets: defaults || tenants ? defined({ defaults, tenants }) : undefined, modelPrices });
}

/** The STRATUS_GITHUB_* settings. */
function githubSettings(read: EnvReader): GithubSettings {
  const author = read.str('STRATUS_GITHUB_COMMIT_AUTHOR');
  const match = author === undefined ? undefined : /^(.+?)\s*<([^<>\s]+@[^<>\s]+)>$/.exec(author.trim());
  if (author !== undefined && !match) throw new SettingError(`STRATUS_GITHUB_COMMIT_AUTHOR: expected "Name <email>", got ${JSON.stringify(author)}.`);
  const appId = read.str('STRATUS_GITHUB_APP_ID');
  const privateKey = read.str('STRATUS_GITHUB_APP_PRIVATE_KEY');
  if ((appId === undefined) !== (privateKey === undefined))
    throw new SettingError('STRATUS_GITHUB_APP_ID and STRATUS_GITHUB_APP_PRIVATE_KEY: set both (a GitHub App) or neither.');
  return defined({
    webhookSecret: read.str('STRATUS_GITHUB_WEBHOOK_SECRET'),
    appId,
    privateKey,
    token: read.str('STRATUS_GITHUB_TOKEN'),
    apiUrl: read.url('STRATUS_GITHUB_API_URL'),
    workerFunction: read.str('STRATUS_GITHUB_WORKER_FUNCTION'),
    consoleUrl: read.url('STRATUS_CONSOLE_URL'),
    commitAuthor: match ? { name: match[1]!, email: match[2]! } : undefined,
    deliveryLogDays: read.int('STRATUS_GITHUB_DELIVERY_LOG_DAYS', 1, 400),
  });
}

function observabilitySettings(read: EnvReader): EnvSettings['observability'] {
  return {
    stage: read.str('STRATUS_STAGE'),
    service: read.str('POWERTOOLS_SERVICE_NAME'),
    namespace: read.str('POWERTOOLS_METRICS_NAMESPACE'),
    logSampleRate: sampleRate(read.str('POWERTOOLS_LOGGER_SAMPLE_RATE')),
    otlpTracesEndpoint: read.url('STRATUS_OTEL_TRACES_ENDPOINT'),
    otlpHeaders: headerPairs(read.str('STRATUS_OTEL_HEADERS')),
  };
}

/** `name=value,name=value` (values may hold `=`); undefined when unset. */
function headerPairs(spec: string | undefined): Record<string, string> | undefined {
  if (spec === undefined) return undefined;
  const headers: Record<string, string> = {};
  for (const pair of spec
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new SettingError(`STRATUS_OTEL_HEADERS: expected "name=value" pairs separated by commas, got "${pair.slice(0, 40)}".`);
    headers[pair.slice(0, eq).trim()] = pair.slice(eq + 1).trim();
  }
  return headers;
}

export function parseTokens(spec: string): Record<string, string> {
  const tokens: Record<string, string> = {};
  for (const pair of spec
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const eq = pair.lastIndexOf('=');
    if (eq <= 0) throw new SettingError(`STRATUS_API_TOKENS: expected "token=tenant" pairs, got "${pair}"`);
    tokens[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return tokens;
}

/** Drops unset values, so what the environment leaves out keeps the schema's (or the local stack's) default. */
export function defined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
