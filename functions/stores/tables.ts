/**
 * The DynamoDB tables, described once: the local stack creates them from this, and the CDK app
 * declares the same keys. No table needs transactions: messages are appended under a sequence
 * number with a create-only write while the turn holds the session's lease.
 */
export interface TableNames {
  sessions: string;
  messages: string;
  events: string;
  schedules: string;
  approvals: string;
}

/**
 * Every table has TTL enabled on this attribute (epoch seconds). Items that should expire
 * (events, pending approvals) set it; items without it live forever.
 */
export const TTL_ATTRIBUTE = 'ttl';

export interface KeyDef {
  name: string;
  type: 'S' | 'N';
}

export interface TableSpec {
  partitionKey: KeyDef;
  sortKey?: KeyDef;
  indexes?: { name: string; partitionKey: KeyDef; sortKey?: KeyDef }[];
}

/** Sessions: one item per session; `byTenant` lists a tenant's sessions newest first. */
export const SESSIONS_TABLE: TableSpec = {
  partitionKey: { name: 'sessionId', type: 'S' },
  indexes: [
    { name: 'byTenant', partitionKey: { name: 'tenantId', type: 'S' }, sortKey: { name: 'createdAt', type: 'S' } },
  ],
};

/** Messages: the append-only log of a session, ordered by `seq`. */
export const MESSAGES_TABLE: TableSpec = {
  partitionKey: { name: 'sessionId', type: 'S' },
  sortKey: { name: 'seq', type: 'N' },
};

/**
 * Turn events (what SSE clients see), keyed `{turnId}/{seq}` so a turn's events read in order
 * and, since turn ids are time-ordered, a session's turns do too. Items expire (TTL_ATTRIBUTE):
 * the message log, not this, is the durable record.
 */
export const EVENTS_TABLE: TableSpec = {
  partitionKey: { name: 'sessionId', type: 'S' },
  sortKey: { name: 'eventKey', type: 'S' },
};

/** Scheduled tasks; `byTenant` lists a tenant's schedules. */
export const SCHEDULES_TABLE: TableSpec = {
  partitionKey: { name: 'scheduleId', type: 'S' },
  indexes: [
    { name: 'byTenant', partitionKey: { name: 'tenantId', type: 'S' }, sortKey: { name: 'createdAt', type: 'S' } },
  ],
};

/** Approvals: tool calls waiting for a person's answer (durable ask), one item per tool_use. */
export const APPROVALS_TABLE: TableSpec = {
  partitionKey: { name: 'sessionId', type: 'S' },
  sortKey: { name: 'toolUseId', type: 'S' },
};

export function tableSpecs(names: TableNames): [string, TableSpec][] {
  return [
    [names.sessions, SESSIONS_TABLE],
    [names.messages, MESSAGES_TABLE],
    [names.events, EVENTS_TABLE],
    [names.schedules, SCHEDULES_TABLE],
    [names.approvals, APPROVALS_TABLE],
  ];
}
