import { ConflictError, NotFoundError } from '../shared/errors.ts';
import { isId, showId } from '../shared/ids.ts';
import type { TurnSummary } from '../stores/session-store.ts';
import { withDeadLeaseFreed } from './crashed-turn.ts';
import { turnEventsUrl } from './follow-turn.ts';
import type { TurnDeps } from '../agent/turn-deps.ts';

/** How long `POST …/interrupt` waits for the turn to end before answering 202 (it still stops). */
export const INTERRUPT_WAIT_MS = 10_000;
const POLL_MS = 100;

export type InterruptDeps = Pick<TurnDeps, 'sessions' | 'events' | 'clock' | 'log'>;

export type InterruptOutcome =
  /** The turn ended (its lease is released): the session takes the next prompt now. */
  | { state: 'stopped'; turnId: string; lastTurn: TurnSummary | null; eventsUrl: string }
  /** Recorded, but the turn is still finishing (a `block` tool runs to its end, a continuation is on its way). */
  | { state: 'stopping'; turnId: string; eventsUrl: string };

/**
 * Stops a running turn wherever it runs: the request is stored on the session (conditional on the
 * turn still holding it), the holder sees it at its next heartbeat and aborts its loop (a
 * continuation sees it when it takes the lease over), and this call waits, a while, until the
 * turn has ended with `stopReason: "interrupted"`.
 */
export async function interruptTurn(
  deps: InterruptDeps,
  opts: { sessionId: string; tenantId: string; turnId: string; waitMs?: number },
): Promise<InterruptOutcome> {
  const { sessionId, turnId } = opts;
  const session = await deps.sessions.getForTenant(sessionId, opts.tenantId);
  const eventsUrl = turnEventsUrl(sessionId, turnId);
  if (!isId('turn', turnId)) throw new NotFoundError(`Turn ${showId(turnId)} not found in session ${sessionId}.`);
  const recorded = await deps.sessions.requestInterrupt(sessionId, turnId, deps.clock());
  if (!recorded) {
    const ended = session.lastTurn?.turnId === turnId ? session.lastTurn : undefined;
    if (ended || (await deps.events.last(sessionId, turnId))) {
      throw new ConflictError(`Turn ${turnId} is not running${ended ? ` (it ended with ${ended.stopReason})` : ''}.`, 'turn_not_running');
    }
    throw new NotFoundError(`Turn ${showId(turnId)} not found in session ${sessionId}.`);
  }
  deps.log.info('turn interrupt requested', { sessionId, turnId });
  const until = deps.clock() + (opts.waitMs ?? INTERRUPT_WAIT_MS);
  while (deps.clock() < until) {
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    const now = await deps.sessions.get(sessionId);
    if (!now) break;
    // A holder that died meanwhile is ended (crashed) by the same check every status reader makes.
    const current = await withDeadLeaseFreed(deps, now);
    if (current.lease?.turnId !== turnId) {
      return { state: 'stopped', turnId, lastTurn: current.lastTurn?.turnId === turnId ? current.lastTurn : null, eventsUrl };
    }
  }
  return { state: 'stopping', turnId, eventsUrl };
}
