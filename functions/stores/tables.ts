/**
 * The DynamoDB tables, described once. Everything that names a table reads this list: the CDK
 * app declares them (infra/constructs/data-stores.ts) and hands their names to the functions
 * (`tableEnvironment`), the Lambda config reads them back (`tableNamesFromEnv`), the local stack
 * names them (`tableNames`) and creates them (`ensureTables`). Adding a table is one entry here
 * plus the store that uses it.
 *
 * No table needs transactions: messages are appended under a sequence number with a
 * create-only write while the turn holds the session's lease.
 */

/**
 * The TTL attribute (epoch seconds). Items that should expire (events, pending approvals) set
 * it; items without it live forever.
 */
export const TTL_ATTRIBUTE = 'ttl';

export interface KeyDef {
  name: string;
  type: 'S' | 'N';
}

export interface TableSpec {
  partitionKey: KeyDef;
  sortKey?: KeyDef;
  indexes?: readonly { name: string; partitionKey: KeyDef; sortKey?: KeyDef }[];
  /** The attribute DynamoDB expires items by (only items that carry it expire). */
  ttlAttribute: string;
}

const BY_TENANT = { name: 'byTenant', partitionKey: { name: 'tenantId', type: 'S' }, sortKey: { name: 'createdAt', type: 'S' } } as const;
/** A tenant's items by last change (`updatedAt`, which every write of a session moves on), newest first. */
const BY_ACTIVITY = { name: 'byActivity', partitionKey: { name: 'tenantId', type: 'S' }, sortKey: { name: 'updatedAt', type: 'S' } } as const;

/** Every table, by the key the config, the stores and the CDK app call it. */
export const TABLES = {
  /** One item per session; `byTenant` lists a tenant's sessions newest first, `byActivity` by last activity. */
  sessions: {
    partitionKey: { name: 'sessionId', type: 'S' },
    indexes: [BY_TENANT, BY_ACTIVITY],
    ttlAttribute: TTL_ATTRIBUTE,
  },
  /** The append-only log of a session, ordered by `seq`. */
  messages: {
    partitionKey: { name: 'sessionId', type: 'S' },
    sortKey: { name: 'seq', type: 'N' },
    ttlAttribute: TTL_ATTRIBUTE,
  },
  /**
   * Turn events (what SSE clients see), keyed `{turnId}/{seq}` so a turn's events read in order
   * and, since turn ids are time-ordered, a session's turns do too. Items expire: the message
   * log, not this, is the durable record.
   */
  events: {
    partitionKey: { name: 'sessionId', type: 'S' },
    sortKey: { name: 'eventKey', type: 'S' },
    ttlAttribute: TTL_ATTRIBUTE,
  },
  /** Scheduled tasks; `byTenant` lists a tenant's schedules. */
  schedules: {
    partitionKey: { name: 'scheduleId', type: 'S' },
    indexes: [BY_TENANT],
    ttlAttribute: TTL_ATTRIBUTE,
  },
  /** Tool calls waiting for a person's answer (durable ask), one item per tool_use. */
  approvals: {
    partitionKey: { name: 'sessionId', type: 'S' },
    sortKey: { name: 'toolUseId', type: 'S' },
    ttlAttribute: TTL_ATTRIBUTE,
  },
  /**
   * Idempotency keys of creating POSTs, one item per tenant and key: the claim, then the first
   * response, replayed to retries. Items expire 24 h after the first request (TTL).
   */
  idempotency: {
    partitionKey: { name: 'scopedKey', type: 'S' },
    ttlAttribute: TTL_ATTRIBUTE,
  },
  /**
   * GitHub repositories connected to Stratus, one item per repository: keyed `gh:<repository id>`
   * (names change hands, ids do not); connections made before ids were recorded are keyed by
   * `owner/name` in lower case. `byTenant` lists a tenant's.
   */
  githubRepos: {
    partitionKey: { name: 'repository', type: 'S' },
    indexes: [BY_TENANT],
    ttlAttribute: TTL_ATTRIBUTE,
  },
  /** Webhook deliveries seen, by `X-GitHub-Delivery`: a create-only write makes a redelivery a no-op. Items expire. */
  githubDeliveries: {
    partitionKey: { name: 'deliveryId', type: 'S' },
    ttlAttribute: TTL_ATTRIBUTE,
  },
  /** What each GitHub-triggered run did (session, branch, PR, outcome, cost); `byTenant` lists a tenant's. */
  githubRuns: {
    partitionKey: { name: 'runId', type: 'S' },
    indexes: [BY_TENANT],
    ttlAttribute: TTL_ATTRIBUTE,
  },
  /**
   * One item per issue or pull request Stratus works on (`owner/name#number`): its session,
   * branch, last pushed commit and PR, and the run holding it (a conditional write, so an issue
   * is worked on once at a time). A Stratus PR's number points at its issue's thread. Beside each
   * thread, `item:<threadKey>` counts what every run on the issue spent (its one budget) and its
   * failing-check fix attempts (functions/stores/github-item-store.ts).
   */
  githubThreads: {
    partitionKey: { name: 'threadKey', type: 'S' },
    ttlAttribute: TTL_ATTRIBUTE,
  },
  /**
   * GitHub App installations claimed by tenants, one item per installation id (a conditional
   * write, so two tenants cannot both claim one); `byTenant` lists a tenant's.
   */
  githubInstallations: {
    partitionKey: { name: 'installationId', type: 'S' },
    indexes: [BY_TENANT],
    ttlAttribute: TTL_ATTRIBUTE,
  },
  /**
   * Tenant API tokens made through the admin routes, one item per public token id (`stk_…`, the
   * start of the token): the token's SHA-256, never the token, with tenant, label and times.
   */
  apiTokens: {
    partitionKey: { name: 'tokenId', type: 'S' },
    ttlAttribute: TTL_ATTRIBUTE,
  },
  /**
   * One item per tenant: `storedBytes`, what its sessions keep in S3 (functions/stores/tenant-usage.ts),
   * changed only by atomic ADDs, and refused by a conditional one past the storage quota.
   */
  tenantUsage: {
    partitionKey: { name: 'tenantId', type: 'S' },
    ttlAttribute: TTL_ATTRIBUTE,
  },
  /** One item per tenant: what it sets for all of its sessions (functions/stores/tenant-settings-store.ts). */
  tenantSettings: {
    partitionKey: { name: 'tenantId', type: 'S' },
    ttlAttribute: TTL_ATTRIBUTE,
  },
} as const satisfies Record<string, TableSpec>;

export type TableKey = keyof typeof TABLES;
export type TableNames = Record<TableKey, string>;

export const TABLE_KEYS = Object.keys(TABLES) as [TableKey, ...TableKey[]];

/** `{prefix}-{key}` for every table: `stratus-dev-sessions`, `stratus-sessions` (local). */
export function tableNames(prefix: string): TableNames {
  return Object.fromEntries(TABLE_KEYS.map((key) => [key, `${prefix}-${key}`])) as TableNames;
}

/** The environment variable that carries a table's name to the functions: STRATUS_SESSIONS_TABLE, ... */
export function tableEnvVar(key: TableKey): string {
  return `STRATUS_${key.toUpperCase()}_TABLE`;
}

/** The functions' environment entries for the tables (what the CDK app sets). */
export function tableEnvironment(names: TableNames): Record<string, string> {
  return Object.fromEntries(TABLE_KEYS.map((key) => [tableEnvVar(key), names[key]]));
}

/** The table names as the environment gives them (the config schema reports any that is missing). */
export function tableNamesFromEnv(env: NodeJS.ProcessEnv): Record<TableKey, string | undefined> {
  return Object.fromEntries(TABLE_KEYS.map((key) => [key, env[tableEnvVar(key)]])) as Record<TableKey, string | undefined>;
}

/** Each table's name and description, in the order of TABLES. */
export function tableSpecs(names: TableNames): [string, TableSpec][] {
  return TABLE_KEYS.map((key) => [names[key], TABLES[key]]);
}
