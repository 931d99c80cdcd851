import { permissionModeSchema } from '../permissions/types.ts';

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
  { name: 'PORT', meaning: 'API port (`0` = any free port)', default: '8787', where: 'local' },
  { name: 'STRATUS_DATA_DIR', meaning: 'data folder for the local stack', default: './.stratus-data', where: 'local' },
  { name: 'STRATUS_API_TOKENS', meaning: '`token=tenant,token2=tenant2`: bearer tokens and the tenant each sees (AWS: in the tokens secret)', default: 'local: one generated token in `<data>/api-token`, tenant `local`', where: 'both' },
  { name: 'ANTHROPIC_API_KEY', meaning: 'use the real Anthropic API (AWS: in the key secret)', default: 'local: unset → the scripted model', where: 'both' },
  { name: 'ANTHROPIC_BASE_URL', meaning: 'a compatible endpoint', default: "Anthropic's", where: 'both' },
  { name: 'STRATUS_MODEL', meaning: 'the model', default: 'claude-sonnet-5-5', where: 'both' },
  { name: 'STRATUS_FALLBACK_MODEL', meaning: 'the model to switch to when the first stays overloaded', default: 'none', where: 'both' },
  { name: 'STRATUS_CONTEXT_WINDOW', meaning: "the model's window in tokens, for auto-compaction", default: '200000', where: 'both' },
  { name: 'STRATUS_MAX_MODEL_CALLS', meaning: 'model calls one turn may make before it stops with `max_turns`', default: '50', where: 'both' },
  { name: 'STRATUS_PERMISSION_MODE', meaning: 'mode of sessions that choose none: `default`, `acceptEdits`, `plan`, `bypassPermissions`, `dontAsk`', default: 'bypassPermissions', where: 'both' },
  { name: 'STRATUS_MAX_TOOL_CONCURRENCY', meaning: 'concurrency-safe tool calls run at once (1–100)', default: '10', where: 'both' },
  { name: 'STRATUS_LEASE_MS', meaning: 'the longest a crashed turn (or a lost continuation) keeps its session locked', default: '60000', where: 'both' },
  { name: 'STRATUS_HEARTBEAT_MS', meaning: "a running turn's heartbeat; after three missed beats the turn counts as crashed", default: '2000', where: 'both' },
  { name: 'STRATUS_CHECKPOINT_MARGIN_MS', meaning: 'a turn continues in a fresh invocation when less than this remains before the deadline', default: 'AWS 60000, local 0', where: 'both' },
  { name: 'STRATUS_INVOCATION_BUDGET_MS', meaning: 'where the platform gives no deadline (locally), pretend each invocation has this many ms', default: 'unset', where: 'both' },
  { name: 'STRATUS_CORS_ORIGINS', meaning: 'origins a browser may call the API from, comma-separated (`*` for any)', default: 'none (no CORS headers)', where: 'both' },
  { name: 'STRATUS_SSE_HEARTBEAT_MS', meaning: 'an SSE stream sends a `: heartbeat` comment this often while quiet', default: '15000', where: 'both' },
  { name: 'STRATUS_LOG_LEVEL', meaning: '`debug`, `info`, `warn`, `error` (JSON lines with session and turn ids)', default: 'info', where: 'both' },
  { name: 'STRATUS_EGRESS', meaning: 'how sandboxes reach allowed domains: `direct` (local), `proxy`, `none`', default: 'AWS: set by the CDK app; local `direct`', where: 'aws' },
  { name: 'AWS_REGION, STRATUS_*_TABLE, STRATUS_BUCKET, STRATUS_RUNNER_FUNCTION, STRATUS_SELF_FUNCTION, STRATUS_SCHEDULE_GROUP, …', meaning: 'the deployment\'s resources and secrets (docs/deploy.md)', default: 'set by the CDK app', where: 'aws' },
];

/** The parts of the configuration the environment can set in both places (a partial StratusConfig input). */
export interface EnvSettings {
  apiTokens?: Record<string, string>;
  model: { apiKey?: string; baseURL?: string; name?: string; fallbackName?: string; contextWindow?: number };
  turn: { maxModelCalls?: number; leaseMs?: number; heartbeatMs?: number; checkpointMarginMs?: number; invocationBudgetMs?: number };
  api: { corsOrigins?: string[]; sseHeartbeatMs?: number };
  permissions?: { defaultMode: string };
  maxToolConcurrency?: number;
  logLevel?: 'debug' | 'info' | 'warn' | 'error';
  egress?: 'direct' | 'proxy' | 'none';
}

/** A setting's value is malformed: start-up stops with a message naming the variable. */
export class SettingError extends Error {
  override name = 'SettingError';
}

/**
 * Reads every shared setting from the environment. Unset or empty means the default; a value
 * that does not parse throws a SettingError naming the variable and what it expects.
 */
export function settingsFromEnv(env: NodeJS.ProcessEnv): EnvSettings {
  const str = (name: string) => (env[name] === undefined || env[name] === '' ? undefined : env[name]);
  const int = (name: string, min: number, max = Number.MAX_SAFE_INTEGER) => {
    const raw = str(name);
    if (raw === undefined) return undefined;
    const n = Number(raw.replaceAll('_', ''));
    if (!/^\s*[\d_]+\s*$/.test(raw) || !Number.isSafeInteger(n) || n < min || n > max) {
      throw new SettingError(`${name}: expected a whole number${max === Number.MAX_SAFE_INTEGER ? ` of at least ${min}` : ` from ${min} to ${max}`}, got ${JSON.stringify(raw)}.`);
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
  const tokens = str('STRATUS_API_TOKENS');
  const origins = str('STRATUS_CORS_ORIGINS');
  const mode = oneOf('STRATUS_PERMISSION_MODE', permissionModeSchema.options);
  return {
    ...(tokens !== undefined ? { apiTokens: parseTokens(tokens) } : {}),
    model: {
      apiKey: str('ANTHROPIC_API_KEY'),
      baseURL: url('ANTHROPIC_BASE_URL'),
      name: str('STRATUS_MODEL'),
      fallbackName: str('STRATUS_FALLBACK_MODEL'),
      contextWindow: int('STRATUS_CONTEXT_WINDOW', 1_000),
    },
    turn: {
      maxModelCalls: int('STRATUS_MAX_MODEL_CALLS', 1),
      leaseMs: int('STRATUS_LEASE_MS', 1_000),
      heartbeatMs: int('STRATUS_HEARTBEAT_MS', 10),
      checkpointMarginMs: int('STRATUS_CHECKPOINT_MARGIN_MS', 0),
      invocationBudgetMs: int('STRATUS_INVOCATION_BUDGET_MS', 1_000),
    },
    api: {
      corsOrigins: origins?.split(',').map((o) => o.trim()).filter(Boolean).map((o) => {
        if (o !== '*' && !/^https?:\/\/[^/\s]+$/.test(o)) throw new SettingError(`STRATUS_CORS_ORIGINS: expected origins like https://app.example.com (scheme and host, no path) or *, got ${JSON.stringify(o)}.`);
        return o;
      }),
      sseHeartbeatMs: int('STRATUS_SSE_HEARTBEAT_MS', 100),
    },
    ...(mode ? { permissions: { defaultMode: mode } } : {}),
    maxToolConcurrency: int('STRATUS_MAX_TOOL_CONCURRENCY', 1, 100),
    logLevel: oneOf('STRATUS_LOG_LEVEL', ['debug', 'info', 'warn', 'error'] as const),
    egress: oneOf('STRATUS_EGRESS', ['direct', 'proxy', 'none'] as const),
  };
}

export function parseTokens(spec: string): Record<string, string> {
  const tokens: Record<string, string> = {};
  for (const pair of spec.split(',').map((s) => s.trim()).filter(Boolean)) {
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
