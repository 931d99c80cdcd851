import type { EventStore, StoredTurnEvent } from '../stores/event-store.ts';

/** How often a follower polls the event log for new events. */
export const FOLLOW_POLL_MS = 200;

/** Where a client follows a turn's events (and reconnects with Last-Event-ID). */
export function turnEventsUrl(sessionId: string, turnId: string): string {
  return `/v1/sessions/${sessionId}/turns/${turnId}/events`;
}

/**
 * A turn's events from the durable log after `afterSeq`, in order, polling for new ones until
 * `turn_end` has been yielded or `keepGoing` says stop (a closed client, a near deadline).
 */
export async function* followTurn(
  events: EventStore,
  sessionId: string,
  turnId: string,
  afterSeq: number,
  keepGoing: () => boolean,
  opts: { limit?: number; sleep?: (ms: number) => Promise<unknown> } = {},
): AsyncGenerator<StoredTurnEvent> {
  const sleep = opts.sleep ?? ((ms: number) => new Promise((resolve) => setTimeout(resolve, ms)));
  let after = afterSeq;
  while (keepGoing()) {
    const batch = await events.listAfter(sessionId, turnId, after, opts.limit);
    for (const stored of batch) {
      yield stored;
      after = stored.seq;
      if (stored.event.type === 'turn_end') return;
    }
    if (batch.length === 0) await sleep(FOLLOW_POLL_MS);
  }
}
