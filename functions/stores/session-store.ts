import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { SessionSettings } from '../session-settings/session-settings.ts';
import type { FileStateEntry } from '../../sandbox-runner/protocol.ts';
import type { Budgets, UsageRecord } from './budgets.ts';
import type { SetupRecord } from './setup-record.ts';
import { NotFoundError, SessionBusyError } from '../shared/errors.ts';
import { isId, showId } from '../shared/ids.ts';
import { BY_ACTIVITY, BY_CREATION, queryByTenant } from './tenant-index.ts';

export type SessionStatus = 'idle' | 'running' | 'failed' | 'awaiting_permission' | 'awaiting_answer';

/**
 * A session (or a turn's stop reason) waiting for a person: `awaiting_permission` while a tool
 * call waits for permission, `awaiting_answer` while only the agent's questions wait.
 */
export function awaitsPerson(status: string | undefined): status is 'awaiting_permission' | 'awaiting_answer' {
  return status === 'awaiting_permission' || status === 'awaiting_answer';
}

export interface WorkspaceRef {
  /** Workspace id: the S3 prefix under `workspaces/`. */
  id: string;
  /** The manifest version the session's next tool call starts from. */
  version: number;
}

/**
 * The session's cached environment (docs/workspaces.md, "The cached environment"): the layer of
 * its repository and set-up fingerprint that every runner call names, so a runner without it
 * restores it beside the workspace. Written by functions/environments/environment-layer.ts.
 */
export interface EnvironmentRef {
  /** The layer's key: `environments/{tenantId}/github/{owner}/{name}/{fingerprint}.tar.gz`. */
  key: string;
  fingerprint: string;
}

export interface TurnSummary {
  turnId: string;
  stopReason: string;
  startedAt: string;
  endedAt: string;
  error?: string;
  /** With stopReason `budget_exceeded`: which budget. */
  budget?: string;
  /** The turn's tokens and cost. */
  usage?: UsageRecord;
}

export interface Lease {
  owner: string;
  turnId: string;
  /** Not renewed by then, the lease is free whatever else it says (STRATUS_LEASE_MS after the last renewal). */
  expiresAt: number;
  /** Present on a turn's lease (also while it is handed to a continuation): a dead one gets a `crashed` end. */
  kind?: 'turn';
  /** When the turn started (epoch ms), for the summary of a turn that crashed. */
  startedAt?: number;
  /** The holder's last heartbeat (epoch ms). Absent where nobody beats: a hand-off, session operations. */
  heartbeatAt?: number;
  /**
   * When a missed heartbeat makes the lease dead: set by the holder at each beat (a few of its
   * beat intervals ahead), so readers judge liveness without knowing the holder's settings.
   */
  staleAt?: number;
}

/** When the lease stops protecting its holder: its expiry, or sooner when its heartbeats stop. */
export function leaseDeadAt(lease: Lease): number {
  return lease.staleAt === undefined ? lease.expiresAt : Math.min(lease.expiresAt, lease.staleAt);
}

export function leaseIsDead(lease: Lease, now: number): boolean {
  return now > leaseDeadAt(lease);
}

/** `leaseIsDead` as a DynamoDB condition on an item's `lease`, with the time in `:nowMs`. */
export const LEASE_IS_DEAD = '(lease.expiresAt < :nowMs OR lease.staleAt < :nowMs)';
/** No lease on the item, or a dead one: whoever asks may take it. */
export const LEASE_IS_FREE = `(attribute_not_exists(lease) OR ${LEASE_IS_DEAD})`;

/** Whole seconds a caller refused by this lease should wait before trying again (at least 1, at most 60). */
export function retryAfterSeconds(lease: Lease | undefined, now: number): number {
  if (!lease) return 1;
  return Math.min(60, Math.max(1, Math.ceil((leaseDeadAt(lease) - now) / 1000)));
}

/** Everything a stateless turn reloads, besides the messages. */
export interface SessionSource {
  kind: 'github';
  repository: string;
  /** The issue or pull request number, and which of the two it is. */
  number: number;
  type: 'issue' | 'pull_request';
  url: string;
}

export interface SessionRecord {
  sessionId: string;
  tenantId: string;
  createdAt: string;
  updatedAt: string;
  status: SessionStatus;
  title?: string;
  /** Number of messages in the log; the next message gets this `seq`. */
  messageCount: number;
  workspace: WorkspaceRef;
  /** The cached environment its runner calls restore and build; absent without set-up steps. */
  environment?: EnvironmentRef;
  /**
   * The workspace version the session's first turn started from (written with that turn's lease):
   * where `GET …/workspace/diff` starts, so content imported before it is not counted as the
   * agent's change. Absent until a turn runs. Set-up steps move it to the version they leave:
   * what they installed is not the agent's change either (functions/environments/setup-steps.ts).
   */
  workspaceBase?: number;
  /** The Bash cwd as the model sees it (under /workspace). */
  cwd: string;
  /** What the model has read or written, by virtual path (the read-file state), so "read in turn 1, edit in turn 3" works. */
  fileState?: Record<string, FileStateEntry>;
  /** Every model call's tokens (by kind) and dollars, summed. */
  usage: UsageRecord;
  turnCount: number;
  /** The session's own budgets (over the tenant's defaults: functions/agent/budget.ts). */
  budgets?: Budgets;
  /** The running turn's spend that per-turn budgets count (kept with every append, across continuations). */
  turnSpend?: { turnId: string; modelCalls: number; startedAt: number };
  /**
   * How many times a lease was taken with acquireLease (absent before the first): a reader that
   * saw the session free and finds the same count when it takes the lease knows nobody held it
   * in between, so nothing but a dead holder wrote its log (acquireLeaseIfUntaken).
   */
  leaseEpoch?: number;
  /** A stop asked for the turn `turnId` (POST …/interrupt): its holder sees it at its next heartbeat, wherever it runs. */
  interruptRequest?: { turnId: string; at: number };
  /** Set by DELETE: the session answers 404 from then on while its data is removed. */
  deletedAt?: string;
  lastTurn?: TurnSummary;
  lease?: Lease;
  /** Permission mode, rules, hooks, unattended flag. */
  settings?: SessionSettings;
  /** What created the session when it was not a person (a GitHub issue or pull request). */
  source?: SessionSource;
  /** Denied tool calls per tool name (denial tracking). */
  denials?: Record<string, number>;
  /**
   * Where turns reload the log from: the first item of the last completed compaction (its
   * summary). Nothing before it is read again.
   */
  reloadFromSeq?: number;
  /**
   * The environment section and git snapshot every request of the session ends its system prompt
   * with, taken once when its first turn starts (functions/agent/environment-snapshot.ts), so
   * every later turn sends the same bytes.
   */
  environmentSection?: string;
  /** Subdirectory instructions files already attached to a Read result, by virtual path: each is attached once per session. */
  attachedInstructions?: string[];
  /** A GitHub run's base branch (its pull requests' target): the git snapshot's main branch when the checkout has none. */
  baseBranch?: string;
  /** A GitHub run's repository instructions (its connection's `instructions` setting when the session was created). */
  repositoryInstructions?: { repository: string; text: string };
  /** Consecutive failed auto-compactions; past the limit auto-compaction stops trying (circuit breaker). */
  autoCompactFailures?: number;
  /** What the set-up steps did before the first turn; absent when there were none (setup-record.ts). */
  setup?: SetupRecord;
  /** The main agent's task list as its last TodoWrite call left it (absent until it writes one). */
  todos?: TodoItem[];
  /** Webhooks an A2A client asked to be told about this session's task at (functions/api/a2a/a2a-push.ts). */
  pushNotifications?: PushNotificationTarget[];
}

/** One A2A push notification config: where to POST the task, and the client's token (it also keys the signature). */
export interface PushNotificationTarget {
  id: string;
  url: string;
  token: string;
}

/** One entry of an agent's task list (the TodoWrite tool's input). */
export interface TodoItem {
  content: string;
  status: 'pending' | 'in_progress' | 'completed';
  /** The entry in the present continuous, shown while it is in progress ("Running the tests"). */
  activeForm: string;
}

export type SessionPatch = Partial<
  Pick<
    SessionRecord,
    | 'status'
    | 'workspace'
    | 'cwd'
    | 'usage'
    | 'lastTurn'
    | 'turnCount'
    | 'messageCount'
    | 'fileState'
    | 'settings'
    | 'denials'
    | 'reloadFromSeq'
    | 'autoCompactFailures'
    | 'turnSpend'
    | 'todos'
    | 'setup'
    | 'workspaceBase'
    | 'environmentSection'
    | 'attachedInstructions'
  >
>;

/** How a tenant's sessions are listed: by last activity or by creation, newest first either way. */
export const SESSION_ORDERS = ['activity', 'created'] as const;
export type SessionOrder = (typeof SESSION_ORDERS)[number];

export interface SessionPage {
  sessions: SessionRecord[];
  nextCursor?: string;
}

/**
 * Sessions in DynamoDB. A turn takes a lease with a conditional write; every later write of
 * that turn is conditional on still holding it, so a turn whose lease was taken over (it
 * stalled past expiry) cannot clobber the newer turn's state.
 */
export class SessionStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  async create(record: SessionRecord): Promise<void> {
    await this.db.send(new PutCommand({ TableName: this.table, Item: record, ConditionExpression: 'attribute_not_exists(sessionId)' }));
  }

  async get(sessionId: string): Promise<SessionRecord | undefined> {
    const out = await this.db.send(new GetCommand({ TableName: this.table, Key: { sessionId }, ConsistentRead: true }));
    return out.Item as SessionRecord | undefined;
  }

  /** The session if it exists and belongs to the tenant; otherwise 404 (never reveal other tenants' ids). */
  async getForTenant(sessionId: string, tenantId: string): Promise<SessionRecord> {
    const record = isId('ses', sessionId) ? await this.get(sessionId) : undefined;
    if (!record || record.tenantId !== tenantId || record.deletedAt !== undefined) throw new NotFoundError(`Session ${showId(sessionId)} not found.`);
    return record;
  }

  /**
   * A page of the tenant's sessions, newest first by creation or by last activity (`updatedAt`).
   * By activity, a session written while someone pages moves to the front, before the cursor:
   * it never shows twice, but a session that was not yet reached when it moved is missed by that
   * pass (the next listing from the start has it first). Sessions that do not change while one
   * pages appear exactly once, in either order.
   */
  async listForTenant(tenantId: string, opts: { limit: number; cursor?: string; order?: SessionOrder }): Promise<SessionPage> {
    const index = opts.order === 'activity' ? BY_ACTIVITY : BY_CREATION;
    const page = await queryByTenant<SessionRecord>(this.db, this.table, 'sessionId', tenantId, { limit: opts.limit, cursor: opts.cursor, index });
    // A deleted session's record lives only until its data is gone; it is never listed.
    return { sessions: page.items.filter((s) => s.deletedAt === undefined), nextCursor: page.nextCursor };
  }

  /**
   * Takes the session's lease if it is free, expired or its heartbeats stopped; otherwise
   * SessionBusyError (HTTP 409, with how long to wait).
   */
  async acquireLease(sessionId: string, lease: Lease, now: number): Promise<SessionRecord> {
    try {
      return await this.takeLease(sessionId, lease, now);
    } catch (err) {
      if (!(err instanceof ConditionalCheckFailedException)) throw err;
      const current = await this.get(sessionId);
      if (!current) throw new NotFoundError(`Session ${sessionId} not found.`);
      throw new SessionBusyError(sessionId, retryAfterSeconds(current.lease, now));
    }
  }

  /**
   * Takes the lease as acquireLease does, but only if no lease was taken since the caller read
   * `seen` (its `leaseEpoch` is still the one read); undefined otherwise, whatever the reason
   * (then acquireLease says which). What the caller read of the log while it was free is then
   * still the whole log but for what a dead holder may add (docs/turns.md, "The first request of a turn").
   */
  async acquireLeaseIfUntaken(sessionId: string, lease: Lease, now: number, seen: Pick<SessionRecord, 'leaseEpoch'>): Promise<SessionRecord | undefined> {
    return this.takeLease(sessionId, lease, now, seen).catch((err: unknown) => {
      if (err instanceof ConditionalCheckFailedException) return undefined;
      throw err;
    });
  }

  private async takeLease(sessionId: string, lease: Lease, now: number, seen?: Pick<SessionRecord, 'leaseEpoch'>): Promise<SessionRecord> {
    const untaken = seen ? (seen.leaseEpoch === undefined ? ' AND attribute_not_exists(leaseEpoch)' : ' AND leaseEpoch = :seenEpoch') : '';
    const out = await this.db.send(
      new UpdateCommand({
        TableName: this.table,
        Key: { sessionId },
        // A stop asked for an earlier turn is void for this one. The first turn's lease also
        // records the version it starts from, in the same write (the session's diff starts there).
        UpdateExpression: `SET lease = :lease, #status = :running, updatedAt = :now${lease.kind === 'turn' ? ', workspaceBase = if_not_exists(workspaceBase, workspace.#version)' : ''} ADD leaseEpoch :one REMOVE interruptRequest`,
        ConditionExpression: `attribute_exists(sessionId) AND attribute_not_exists(deletedAt) AND ${LEASE_IS_FREE}${untaken}`,
        ExpressionAttributeNames: { '#status': 'status', ...(lease.kind === 'turn' ? { '#version': 'version' } : {}) },
        ExpressionAttributeValues: {
          ':lease': lease,
          ':running': 'running',
          ':now': new Date(now).toISOString(),
          ':nowMs': now,
          ':one': 1,
          ...(seen?.leaseEpoch !== undefined ? { ':seenEpoch': seen.leaseEpoch } : {}),
        },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return out.Attributes as SessionRecord;
  }

  /**
   * Takes a lease that was handed to `expectedOwner` (a turn continuing in a new invocation).
   * Only that exact hand-off qualifies: a duplicate or late delivery, after the continuation
   * already ran or another turn took the session, gets SessionBusyError and does nothing.
   */
  async takeOverLease(sessionId: string, expectedOwner: string, lease: Lease, now: number): Promise<SessionRecord> {
    try {
      const out = await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { sessionId },
          UpdateExpression: 'SET lease = :lease, updatedAt = :now',
          ConditionExpression: 'lease.#owner = :expected',
          ExpressionAttributeNames: { '#owner': 'owner' },
          ExpressionAttributeValues: { ':lease': lease, ':expected': expectedOwner, ':now': new Date(now).toISOString() },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return out.Attributes as SessionRecord;
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) throw new SessionBusyError(sessionId);
      throw err;
    }
  }

  /** Gives the lease to another owner (the continuation of this turn) with the final patch of this invocation. */
  async handOffLease(sessionId: string, owner: string, next: Lease, patch: SessionPatch): Promise<void> {
    const { expression, names, values } = setExpression({ ...patch, lease: next, updatedAt: new Date().toISOString() });
    await this.db.send(
      new UpdateCommand({
        TableName: this.table,
        Key: { sessionId },
        UpdateExpression: expression,
        ConditionExpression: 'lease.#owner = :owner',
        ExpressionAttributeNames: { ...names, '#owner': 'owner' },
        ExpressionAttributeValues: { ...values, ':owner': owner },
      }),
    );
  }

  /** Updates fields while holding the lease (and extends it); fails if the lease was lost. */
  async updateUnderLease(sessionId: string, owner: string, patch: SessionPatch, leaseExpiresAt?: number): Promise<void> {
    const { expression, names, values } = setExpression({ ...patch, updatedAt: new Date().toISOString() });
    const extend = leaseExpiresAt === undefined ? '' : ', lease.expiresAt = :leaseExpiresAt';
    await this.db.send(
      new UpdateCommand({
        TableName: this.table,
        Key: { sessionId },
        UpdateExpression: `${expression}${extend}`,
        ConditionExpression: 'lease.#owner = :owner',
        ExpressionAttributeNames: { ...names, '#owner': 'owner' },
        ExpressionAttributeValues: {
          ...values,
          ':owner': owner,
          ...(leaseExpiresAt === undefined ? {} : { ':leaseExpiresAt': leaseExpiresAt }),
        },
      }),
    );
  }

  /**
   * Records that the lease holder starts the session's set-up steps: only while it holds the
   * lease and only if no set-up was ever recorded, so two turns can never both run them (a
   * turn that took over a dead holder's lease finds its `running` record instead). False when
   * a set-up record exists already.
   */
  async claimSetup(sessionId: string, owner: string, setup: SetupRecord): Promise<boolean> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { sessionId },
          UpdateExpression: 'SET #setup = :setup, updatedAt = :now',
          ConditionExpression: 'lease.#owner = :owner AND attribute_not_exists(#setup)',
          ExpressionAttributeNames: { '#owner': 'owner', '#setup': 'setup' },
          ExpressionAttributeValues: { ':owner': owner, ':setup': setup, ':now': new Date().toISOString() },
        }),
      );
      return true;
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return false;
      throw err;
    }
  }

  /**
   * The holder's heartbeat: proves it is alive until `staleAt` and extends the lease. Fails
   * (ConditionalCheckFailedException) if the lease was taken over. Returns the session as it is
   * now: the holder learns of a stop asked for its turn and of budgets changed meanwhile.
   */
  async heartbeat(sessionId: string, owner: string, beat: { at: number; staleAt: number; expiresAt: number }): Promise<SessionRecord> {
    const out = await this.db.send(
      new UpdateCommand({
        TableName: this.table,
        Key: { sessionId },
        UpdateExpression: 'SET lease.heartbeatAt = :at, lease.staleAt = :staleAt, lease.expiresAt = :expiresAt',
        ConditionExpression: 'lease.#owner = :owner',
        ExpressionAttributeNames: { '#owner': 'owner' },
        ExpressionAttributeValues: { ':owner': owner, ':at': beat.at, ':staleAt': beat.staleAt, ':expiresAt': beat.expiresAt },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return out.Attributes as SessionRecord;
  }

  /**
   * Records a stop for the turn `turnId` if it still holds the session (running, or handed to a
   * continuation). Its holder sees it at its next heartbeat; a continuation sees it when it takes
   * the lease over. Returns false when that turn holds the session no longer.
   */
  async requestInterrupt(sessionId: string, turnId: string, at: number): Promise<boolean> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { sessionId },
          UpdateExpression: 'SET interruptRequest = :request',
          ConditionExpression: 'lease.turnId = :turnId',
          ExpressionAttributeValues: { ':request': { turnId, at }, ':turnId': turnId },
        }),
      );
      return true;
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return false;
      throw err;
    }
  }

  /** Changes what a person may change of a session at any time (PATCH); a running turn sees budgets at its next beat, the rest from the next turn. */
  async updateSettings(sessionId: string, patch: Partial<Pick<SessionRecord, 'title' | 'settings' | 'budgets'>>): Promise<SessionRecord> {
    const { expression, names, values } = setExpression({ ...patch, updatedAt: new Date().toISOString() });
    const out = await this.db.send(
      new UpdateCommand({
        TableName: this.table,
        Key: { sessionId },
        UpdateExpression: expression,
        ConditionExpression: 'attribute_exists(sessionId) AND attribute_not_exists(deletedAt)',
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
        ReturnValues: 'ALL_NEW',
      }),
    );
    return out.Attributes as SessionRecord;
  }

  /**
   * Records the session's cached environment. Only the environment layer writes this attribute,
   * before the set-up steps run, so it needs no lease; a deleted session is left alone.
   */
  async setEnvironment(sessionId: string, environment: EnvironmentRef): Promise<void> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { sessionId },
          UpdateExpression: 'SET environment = :environment',
          ConditionExpression: 'attribute_exists(sessionId) AND attribute_not_exists(deletedAt)',
          ExpressionAttributeValues: { ':environment': environment },
        }),
      );
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) throw new NotFoundError(`Session ${showId(sessionId)} not found.`);
      throw err;
    }
  }

  /** Replaces the session's A2A push notification targets (a deleted session is left alone: 404). */
  async setPushNotifications(sessionId: string, targets: PushNotificationTarget[]): Promise<void> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { sessionId },
          UpdateExpression: 'SET pushNotifications = :targets',
          ConditionExpression: 'attribute_exists(sessionId) AND attribute_not_exists(deletedAt)',
          ExpressionAttributeValues: { ':targets': targets },
        }),
      );
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) throw new NotFoundError(`Session ${showId(sessionId)} not found.`);
      throw err;
    }
  }

  /**
   * DELETE's first step: from now on the session is gone for readers and no turn can take it.
   * Of concurrent deletions exactly one gets past the condition; the others (and a deletion of a
   * session already gone) get NotFoundError, as any later request does, so only one purge is scheduled.
   */
  async markDeleted(sessionId: string, at: number): Promise<void> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { sessionId },
          // A running turn is asked to stop too: its next beat sees the request for its turn.
          UpdateExpression: 'SET deletedAt = :at, interruptRequest = :request',
          ConditionExpression: 'attribute_exists(sessionId) AND attribute_not_exists(deletedAt)',
          ExpressionAttributeValues: { ':at': new Date(at).toISOString(), ':request': { turnId: '*', at } },
        }),
      );
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) throw new NotFoundError(`Session ${showId(sessionId)} not found.`);
      throw err;
    }
  }

  /** The last step of a deletion: the record itself. */
  async remove(sessionId: string): Promise<void> {
    await this.db.send(new DeleteCommand({ TableName: this.table, Key: { sessionId } }));
  }

  /**
   * Frees a lease whose holder is dead (expired, or its heartbeats stopped), with the final
   * patch. Conditional on that same owner still holding it and still being dead, so a holder that
   * beats again keeps its lease and of two takers only one wins. Returns whether this one won.
   */
  async releaseDeadLease(sessionId: string, owner: string, now: number, patch: SessionPatch): Promise<boolean> {
    const { expression, names, values } = setExpression({ ...patch, updatedAt: new Date(now).toISOString() });
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { sessionId },
          UpdateExpression: `${expression} REMOVE lease`,
          ConditionExpression: `lease.#owner = :owner AND ${LEASE_IS_DEAD}`,
          ExpressionAttributeNames: { ...names, '#owner': 'owner' },
          ExpressionAttributeValues: { ...values, ':owner': owner, ':nowMs': now },
        }),
      );
      return true;
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return false;
      throw err;
    }
  }

  /** Writes the final patch and gives the lease up in one conditional update. */
  async releaseLease(sessionId: string, owner: string, patch: SessionPatch): Promise<void> {
    const { expression, names, values } = setExpression({ ...patch, updatedAt: new Date().toISOString() });
    await this.db.send(
      new UpdateCommand({
        TableName: this.table,
        Key: { sessionId },
        UpdateExpression: `${expression} REMOVE lease`,
        ConditionExpression: 'lease.#owner = :owner',
        ExpressionAttributeNames: { ...names, '#owner': 'owner' },
        ExpressionAttributeValues: { ...values, ':owner': owner },
      }),
    );
  }
}

function setExpression(patch: Record<string, unknown>) {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const parts: string[] = [];
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    names[`#${key}`] = key;
    values[`:${key}`] = value;
    parts.push(`#${key} = :${key}`);
  }
  return { expression: `SET ${parts.join(', ')}`, names, values };
}
