import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { TurnDeps } from '../agent/turn-deps.ts';
import type { StoredTurnEvent } from '../stores/event-store.ts';
import { leaseIsDead, type Lease, type SessionRecord, type TurnSummary } from '../stores/session-store.ts';
import type { TurnEvent, UsageTotals } from '../stores/turn-event.ts';

type CrashDeps = Pick<TurnDeps, 'sessions' | 'events' | 'clock' | 'log'>;

/** Attempts to find the next free number of a turn's log while its dead holder's last writes land. */
const END_ATTEMPTS = 10;

function crashedError(lease: Lease | undefined): string {
  const why =
    lease?.heartbeatAt !== undefined
      ? `its process stopped (no heartbeat since ${new Date(lease.heartbeatAt).toISOString()})`
      : lease
        ? 'its process stopped (the lease lapsed; a hand-off that never started counts too)'
        : 'its process stopped';
  return `The turn ended because ${why}. Everything it stored before is kept; send another prompt to go on.`;
}

/**
 * Frees a session whose lease holder is dead (its heartbeats stopped, or the lease expired).
 * A turn's session then reads idle with a `crashed` last turn and the turn's event log gets its
 * `turn_end`. The release is conditional on that same dead lease, so of several readers that
 * notice, one wins; a holder that beats again keeps its session. Returns whether this call freed it.
 */
export async function reapDeadLease(deps: CrashDeps, record: SessionRecord): Promise<boolean> {
  const lease = record.lease;
  const now = deps.clock();
  if (!lease || !leaseIsDead(lease, now)) return false;
  const turn = lease.kind === 'turn';
  const summary: TurnSummary = {
    turnId: lease.turnId,
    stopReason: 'crashed',
    startedAt: new Date(lease.startedAt ?? now).toISOString(),
    endedAt: new Date(now).toISOString(),
    error: crashedError(lease),
  };
  const won = await deps.sessions.releaseDeadLease(
    record.sessionId,
    lease.owner,
    now,
    turn ? { status: 'idle', lastTurn: summary, turnCount: record.turnCount + 1 } : { status: 'idle' },
  );
  if (!won) return false;
  deps.log.warn('freed the session of a dead lease holder', {
    sessionId: record.sessionId,
    turnId: lease.turnId,
    owner: lease.owner,
    heartbeatAt: lease.heartbeatAt,
  });
  // If this process dies right here, a follower of the turn still ends its log (endTurnIfDead).
  if (turn) await endCrashedTurnLog(deps, record.sessionId, lease.turnId, { evenIfEmpty: true, error: summary.error! });
  return true;
}

/**
 * For a reader of a turn's log that found no `turn_end`: ends the log if the turn can no longer
 * write one. A turn that holds the session's lease is dead only when the lease is; a turn that
 * does not (any more) has either ended — its `turn_end` is stored before it lets the lease go —
 * or died and lost the session to a taker. Returns whether the log now ends.
 */
export async function endTurnIfDead(deps: CrashDeps, sessionId: string, turnId: string): Promise<boolean> {
  const record = await deps.sessions.get(sessionId);
  if (!record) return false;
  if (record.lease?.turnId === turnId) return reapDeadLease(deps, record);
  // Only a turn that wrote something: a reader must not create logs for turn ids it made up.
  return endCrashedTurnLog(deps, sessionId, turnId, { evenIfEmpty: false, error: crashedError(undefined) });
}

/**
 * Appends a `crashed` turn_end at the turn's next event number with a create-only write:
 * exactly once, however many notice, and after whatever the dead holder stored last. Returns
 * whether the log ends with a turn_end now.
 */
async function endCrashedTurnLog(deps: CrashDeps, sessionId: string, turnId: string, opts: { evenIfEmpty: boolean; error: string }): Promise<boolean> {
  for (let attempt = 0; attempt < END_ATTEMPTS; attempt++) {
    const { last, usage } = await scanTurn(deps, sessionId, turnId);
    if (last?.event.type === 'turn_end') return true;
    if (!last && !opts.evenIfEmpty) return false;
    const end: TurnEvent = { type: 'turn_end', turnId, stopReason: 'crashed', usage, error: opts.error };
    try {
      await deps.events.append(sessionId, [{ turnId, seq: (last?.seq ?? -1) + 1, event: end }]);
      deps.log.warn('ended the event log of a crashed turn', { sessionId, turnId, seq: (last?.seq ?? -1) + 1 });
      return true;
    } catch (err) {
      // Another reader ended it, or the dead holder's last write landed there: look again.
      if (!(err instanceof ConditionalCheckFailedException)) throw err;
    }
  }
  deps.log.error('could not end the event log of a crashed turn', { sessionId, turnId });
  return false;
}

/** The turn's last stored event, and its usage so far (assistant_message events carry the running total). */
async function scanTurn(deps: CrashDeps, sessionId: string, turnId: string): Promise<{ last?: StoredTurnEvent; usage: UsageTotals }> {
  let usage: UsageTotals = { inputTokens: 0, outputTokens: 0 };
  let last: StoredTurnEvent | undefined;
  for (;;) {
    const page = await deps.events.listAfter(sessionId, turnId, last?.seq ?? -1);
    for (const stored of page) if (stored.event.type === 'assistant_message') usage = { ...stored.event.usage };
    if (page.length === 0) return { last, usage };
    last = page.at(-1);
  }
}

/** The session as a status reader should see it: if its lease holder died, freed first (idle, last turn `crashed`). */
export async function withDeadLeaseFreed(deps: CrashDeps, record: SessionRecord): Promise<SessionRecord> {
  if (!record.lease || !leaseIsDead(record.lease, deps.clock())) return record;
  await reapDeadLease(deps, record);
  return (await deps.sessions.get(record.sessionId)) ?? record;
}
