import type { Lease, SessionPatch, SessionStore } from '../stores/session-store.ts';

export interface SessionHeadDeps {
  sessions: Pick<SessionStore, 'updateUnderLease'>;
  clock: () => number;
  config: { turn: { leaseMs: number } };
}

/**
 * The session's head written under the lease, off the append's critical path (docs/turns.md,
 * "The write order"): updates run one at a time in the order they were asked for, each
 * conditioned on the lease; the first that fails (the lease changed hands) is kept and every
 * later update, append, `flush` and `leaseHeld` fails with it, and nothing after it is written.
 */
export interface SessionHead {
  /** Queues a head update behind the ones already queued (merged into one not started yet); a failure is kept for the next caller. */
  update(patch: SessionPatch): void;
  /** Waits for every queued update; throws the kept failure. */
  flush(): Promise<void>;
  /** Waits for every queued update, whatever became of them (before the lease is released or handed off). */
  settled(): Promise<void>;
  /** Throws the kept failure, if there is one. */
  check(): void;
  /**
   * Whether work with effects may start now: at once (undefined) when no update is queued or the
   * lease as last confirmed stays alive for more than `marginMs`; otherwise a promise of the
   * queued updates (rejected when the lease is lost).
   */
  leaseHeld(): Promise<void> | undefined;
  /** A lease-conditioned write elsewhere (the heartbeat) found the lease ours with these times. */
  confirm(lease: Pick<Lease, 'expiresAt' | 'staleAt'>): void;
}

export function createSessionHead(
  deps: SessionHeadDeps,
  at: { sessionId: string; owner: string; lease?: Pick<Lease, 'expiresAt' | 'staleAt'>; marginMs: number },
): SessionHead {
  let chain: Promise<void> = Promise.resolve();
  let queued = 0;
  /** The update queued behind the one running, not started yet: later updates merge into it. */
  let waiting: SessionPatch | undefined;
  let failure: { error: unknown } | undefined;
  /** The lease's times as the last successful lease-conditioned write left them (unknown: -Infinity, i.e. not confirmed). */
  const confirmed: Pick<Lease, 'expiresAt' | 'staleAt'> = { expiresAt: at.lease?.expiresAt ?? -Infinity, ...(at.lease?.staleAt !== undefined ? { staleAt: at.lease.staleAt } : {}) };
  const check = () => {
    if (failure) throw failure.error;
  };
  const flush = async () => {
    await chain;
    check();
  };
  return {
    update(patch) {
      // Each field is set whole and the later value wins, so two updates not yet started are one
      // write: when the store falls behind (several results in a row), it gets fewer, not more.
      if (waiting) return void Object.assign(waiting, patch);
      waiting = { ...patch };
      queued += 1;
      chain = chain.then(async () => {
        const next = waiting!;
        waiting = undefined;
        try {
          if (failure) return;
          const expiresAt = deps.clock() + deps.config.turn.leaseMs;
          await deps.sessions.updateUnderLease(at.sessionId, at.owner, next, expiresAt);
          confirmed.expiresAt = Math.max(confirmed.expiresAt, expiresAt);
        } catch (error) {
          failure ??= { error };
        } finally {
          queued -= 1;
        }
      });
    },
    flush,
    settled: () => chain,
    check,
    leaseHeld() {
      if (failure) return Promise.reject(failure.error);
      if (queued === 0) return undefined;
      // Dead when either time passes (leaseDeadAt): nobody can take the lease before then.
      if (Math.min(confirmed.expiresAt, confirmed.staleAt ?? Infinity) - deps.clock() > at.marginMs) return undefined;
      return flush();
    },
    confirm(lease) {
      confirmed.expiresAt = Math.max(confirmed.expiresAt, lease.expiresAt);
      if (lease.staleAt !== undefined) confirmed.staleAt = Math.max(confirmed.staleAt ?? -Infinity, lease.staleAt);
    },
  };
}
