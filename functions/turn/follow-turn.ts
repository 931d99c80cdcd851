import type { TurnDeps } from '../agent/turn-deps.ts';
import type { StoredTurnEvent } from '../stores/event-store.ts';
import { endTurnIfDead } from './crashed-turn.ts';

/** How often a follower polls the event log for new events while they come... */
export const FOLLOW_POLL_MS = 200;
/** ...backing off to this while the log is quiet (a long tool call): fewer reads, at most this much later. */
export const FOLLOW_POLL_MAX_MS = 1_000;
/** While nothing new arrives, how often a follower checks that the turn is still alive. */
export const LIVENESS_CHECK_MS = 1_000;

export type FollowDeps = Pick<TurnDeps, 'events' | 'sessions' | 'clock' | 'log'>;

/** Where a client follows a turn's events (and reconnects with Last-Event-ID). */
export function turnEventsUrl(sessionId: string, turnId: string): string {
  return `/v1/sessions/${sessionId}/turns/${turnId}/events`;
}

/**
 * A turn's events from the durable log after `afterSeq`, in order, polling for new ones until
 * `turn_end` has been yielded or `keepGoing` says stop (a closed client, a near deadline). When
 * the log goes quiet it checks the turn is alive: a turn whose process died gets its `crashed`
 * turn_end written (by this follower, if nobody did yet), so no follower waits forever.
 */
export async function* followTurn(
  deps: FollowDeps,
  sessionId: string,
  turnId: string,
  afterSeq: number,
  keepGoing: () => boolean,
  opts: { limit?: number; sleep?: (ms: number) => Promise<unknown> } = {},
): AsyncGenerator<StoredTurnEvent> {
  const sleep = opts.sleep ?? ((ms: number) => new Promise((resolve) => setTimeout(resolve, ms)));
  let after = afterSeq;
  let checkedAt = Number.NEGATIVE_INFINITY;
  let pollMs = FOLLOW_POLL_MS;
  while (keepGoing()) {
    const batch = await deps.events.listAfter(sessionId, turnId, after, opts.limit);
    for (const stored of batch) {
      yield stored;
      after = stored.seq;
      if (stored.event.type === 'turn_end') return;
    }
    if (batch.length > 0) {
      pollMs = FOLLOW_POLL_MS;
      continue;
    }
    if (deps.clock() - checkedAt >= LIVENESS_CHECK_MS) {
      checkedAt = deps.clock();
      if (await endTurnIfDead(deps, sessionId, turnId)) {
        // The log ends with a turn_end: read it, unless it is not after `after` (a follower that
        // resumed at or past the end), for whom nothing more will ever come.
        if ((await deps.events.listAfter(sessionId, turnId, after, 1)).length === 0) return;
        continue;
      }
    }
    await sleep(pollMs);
    pollMs = Math.min(pollMs * 2, FOLLOW_POLL_MAX_MS);
  }
}
