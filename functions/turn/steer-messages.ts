import type { Deps } from '../deps/deps.ts';
import type { SessionRecord } from '../stores/session-store.ts';
import type { SteerRecord } from '../stores/steer-store.ts';

type Taken = { texts: string[]; delivered: () => Promise<void> };
const NONE: Taken = { texts: [], delivered: async () => undefined };

/**
 * The comments queued for a GitHub run's item while it works (functions/github/queue-into-run.ts),
 * taken before a model call: each is claimed with a conditional update (so a racing run of its
 * own cannot take it too), sent as user text in arrival order, and deleted once the session's
 * log holds it. Sessions no GitHub run started have no queue and cost no read.
 */
export function queuedMessages(deps: Partial<Pick<Deps, 'steers'>>, session: SessionRecord, turnId: string): () => Promise<Taken> {
  let queueKey: Promise<string | undefined> | undefined;
  return async () => {
    const steers = deps.steers;
    if (!steers || session.source?.kind !== 'github') return NONE;
    const key = await (queueKey ??= steers.queueOf(session.sessionId));
    if (!key) return NONE;
    const taken: SteerRecord[] = [];
    for (const steer of await steers.list(key)) {
      if (steer.status === 'queued' && (await steers.take(key, steer.steerId, turnId))) taken.push(steer);
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
