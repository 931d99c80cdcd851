import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { SessionStore } from '../stores/session-store.ts';
import { errorMessage } from '../shared/errors.ts';
import type { Logger } from '../shared/logger.ts';
import type { Lease, SessionRecord } from '../stores/session-store.ts';

/** The lease settings (config `turn`). */
interface LeaseTiming {
  leaseMs: number;
  heartbeatMs: number;
}

type LeaseConfig = { config: { turn: LeaseTiming } };

/** Missed heartbeats after which a turn's holder counts as dead and its session may be taken. */
export const HEARTBEATS_BEFORE_DEAD = 3;

/**
 * How often a running turn beats: the configured interval, but never so slow that the missed
 * beats outlast the lease (STRATUS_LEASE_MS stays the longest a dead turn can hold a session).
 */
export function heartbeatEveryMs(turn: LeaseTiming): number {
  return Math.max(50, Math.min(turn.heartbeatMs, Math.floor(turn.leaseMs / HEARTBEATS_BEFORE_DEAD)));
}

/** One beat: alive now, dead if no other beat comes within HEARTBEATS_BEFORE_DEAD intervals. */
export function beatAt(deps: LeaseConfig, at: number): { at: number; staleAt: number; expiresAt: number } {
  return { at, staleAt: at + HEARTBEATS_BEFORE_DEAD * heartbeatEveryMs(deps.config.turn), expiresAt: at + deps.config.turn.leaseMs };
}

/** The lease a turn holds while it runs in this process (it beats from the first moment). */
export function turnLease(deps: LeaseConfig & { instanceId: string }, turnId: string, startedAt: number, now: number): Lease {
  const beat = beatAt(deps, now);
  return { owner: `${deps.instanceId}/${turnId}`, turnId, kind: 'turn', startedAt, expiresAt: beat.expiresAt, heartbeatAt: beat.at, staleAt: beat.staleAt };
}

/**
 * The lease of a turn between invocations: nobody beats while the continuation is on its way,
 * so only its expiry frees the session. A hand-off is not a crash.
 */
export function handOffLease(deps: LeaseConfig, owner: string, turnId: string, startedAt: number, now: number): Lease {
  return { owner, turnId, kind: 'turn', startedAt, expiresAt: now + deps.config.turn.leaseMs };
}

/**
 * Beats for a running turn until stopped: proof that its process is alive (when the beats stop,
 * readers find the turn dead within a few intervals and free the session), and the lease kept
 * through long tool calls that write nothing. A beat refused because the lease changed hands
 * calls `onLost` and stops; any other failure is logged and the next beat tries again. Each
 * beat hands `onBeat` the session as it is now (a stop asked for the turn, changed budgets).
 */
export function startHeartbeat(
  deps: LeaseConfig & { sessions: Pick<SessionStore, 'heartbeat'>; clock: () => number },
  sessionId: string,
  owner: string,
  log: Logger,
  onLost: () => void,
  onBeat?: (session: SessionRecord) => void,
): { stop(): void } {
  const timer = setInterval(() => {
    deps.sessions.heartbeat(sessionId, owner, beatAt(deps, deps.clock())).then(
      (session) => onBeat?.(session),
      (err: unknown) => {
        if (!(err instanceof ConditionalCheckFailedException)) {
          log.warn('a heartbeat failed; the next one may succeed', { error: errorMessage(err) });
          return;
        }
        clearInterval(timer);
        log.error('lost the session lease (it was taken over); stopping the turn', { error: errorMessage(err) });
        onLost();
      },
    );
  }, heartbeatEveryMs(deps.config.turn));
  return { stop: () => clearInterval(timer) };
}
