import type { Deps } from '../deps/deps.ts';
import type { Lease } from '../stores/session-store.ts';

/** Missed heartbeats after which a turn's holder counts as dead and its session may be taken. */
export const HEARTBEATS_BEFORE_DEAD = 3;

/**
 * How often a running turn beats: the configured interval, but never so slow that the missed
 * beats outlast the lease (STRATUS_LEASE_MS stays the longest a dead turn can hold a session).
 */
export function heartbeatEveryMs(turn: Deps['config']['turn']): number {
  return Math.max(50, Math.min(turn.heartbeatMs, Math.floor(turn.leaseMs / HEARTBEATS_BEFORE_DEAD)));
}

/** One beat: alive now, dead if no other beat comes within HEARTBEATS_BEFORE_DEAD intervals. */
export function beatAt(deps: Pick<Deps, 'config'>, at: number): { at: number; staleAt: number; expiresAt: number } {
  return { at, staleAt: at + HEARTBEATS_BEFORE_DEAD * heartbeatEveryMs(deps.config.turn), expiresAt: at + deps.config.turn.leaseMs };
}

/** The lease a turn holds while it runs in this process (it beats from the first moment). */
export function turnLease(deps: Pick<Deps, 'config' | 'instanceId'>, turnId: string, startedAt: number, now: number): Lease {
  const beat = beatAt(deps, now);
  return { owner: `${deps.instanceId}/${turnId}`, turnId, kind: 'turn', startedAt, expiresAt: beat.expiresAt, heartbeatAt: beat.at, staleAt: beat.staleAt };
}

/**
 * The lease of a turn between invocations: nobody beats while the continuation is on its way,
 * so only its expiry frees the session. A hand-off is not a crash.
 */
export function handOffLease(deps: Pick<Deps, 'config'>, owner: string, turnId: string, startedAt: number, now: number): Lease {
  return { owner, turnId, kind: 'turn', startedAt, expiresAt: now + deps.config.turn.leaseMs };
}
