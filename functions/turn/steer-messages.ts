import type { Deps } from '../deps/deps.ts';
import type { SessionRecord } from '../stores/session-store.ts';
import type { SteerRecord, SteerStore } from '../stores/steer-store.ts';

type Taken = { texts: string[]; delivered: () => Promise<void> };
const NONE: Taken = { texts: [], delivered: async () => undefined };

/** A run of its own (`ghr_…`) takes its comment into its prompt and deletes it after; a turn never takes one of those over. */
const RUN_ID_PREFIX = 'ghr';

/**
 * The comments queued for a GitHub run's item while it works (functions/github/queue-into-run.ts),
 * taken before a model call: each is claimed with a conditional update (so a racing run of its
 * own cannot take it too), sent as user text in arrival order, and deleted once the session's
 * log holds it. One that an earlier turn took and never confirmed (its process died between the
 * take and the log) is delivered again unless the log already holds its text, and deleted if it
 * does. Sessions no GitHub run started have no queue and cost no read.
 */
export function queuedMessages(
  deps: Partial<Pick<Deps, 'steers'>>,
  session: SessionRecord,
  turnId: string,
  inLog: (text: string) => boolean,
): () => Promise<Taken> {
  let queueKey: Promise<string | undefined> | undefined;
  return async () => {
    const steers = deps.steers;
    if (!steers || session.source?.kind !== 'github') return NONE;
    const key = await (queueKey ??= steers.queueOf(session.sessionId));
    if (!key) return NONE;
    const taken: SteerRecord[] = [];
    for (const steer of await steers.list(key)) {
      if (await takes(steers, key, steer, { turnId, inLog })) taken.push(steer);
    }
    if (taken.length === 0) return NONE;
    return {
      texts: taken.map((s) => s.text),
      delivered: async () => {
        for (const s of taken) await steers.remove(key, s.steerId);
      },
    };
  };
}

/** Whether this turn delivers `steer` now (taking it, or taking it over from a dead turn). */
async function takes(steers: SteerStore, key: string, steer: SteerRecord, turn: { turnId: string; inLog: (text: string) => boolean }): Promise<boolean> {
  if (steer.status === 'queued') return steers.take(key, steer.steerId, turn.turnId);
  const taker = steer.takenBy ?? '';
  // Taken by this turn in this call's batch, or by a run of its own: not ours to deliver.
  if (taker === turn.turnId || taker.startsWith(RUN_ID_PREFIX)) return false;
  // One turn of a session runs at a time: a turn that took a message and is not this one is over.
  if (turn.inLog(steer.text)) {
    await steers.remove(key, steer.steerId);
    return false;
  }
  return steers.takeOver(key, steer.steerId, taker, turn.turnId);
}
