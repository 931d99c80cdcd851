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

type LeaseTimes = Pick<Lease, 'expiresAt' | 'staleAt'>;

/**
 * How long a head update waits for more before it is written: every update asked for meanwhile
 * merges into it, so a running turn writes its head at most once per window however many round
 * trips it makes (a round trip appends twice: the model's tool call, then its result). A flush,
 * a lease check and the turn's end start the write at once.
 */
export const HEAD_WRITE_DELAY_MS = 100;

interface HeadState {
  chain: Promise<void>;
  /** Updates asked for and not yet done (merged ones count once). */
  queued: number;
  /** The update queued behind the one running, not started yet: later updates merge into it. */
  waiting: SessionPatch | undefined;
  /** Lets the waiting update go now instead of after HEAD_WRITE_DELAY_MS. */
  release: (() => void) | undefined;
  failure: { error: unknown } | undefined;
  /** The lease's times as the last successful lease-conditioned write left them (unknown: -Infinity, not confirmed). */
  confirmed: LeaseTimes;
}

export function createSessionHead(deps: SessionHeadDeps, at: { sessionId: string; owner: string; lease?: LeaseTimes; marginMs: number }): SessionHead {
  const s: HeadState = {
    chain: Promise.resolve(),
    queued: 0,
    waiting: undefined,
    release: undefined,
    failure: undefined,
    confirmed: { expiresAt: at.lease?.expiresAt ?? -Infinity, ...(at.lease?.staleAt !== undefined ? { staleAt: at.lease.staleAt } : {}) },
  };
  const check = () => {
    if (s.failure) throw s.failure.error;
  };
  const flush = async () => {
    s.release?.();
    await s.chain;
    check();
  };
  return {
    update(patch) {
      // Each field is set whole and the later value wins, so two updates not yet started are one
      // write: when the store falls behind (several results in a row), it gets fewer, not more.
      // A field given as undefined is not written (setExpression skips it): it must not erase a queued value either.
      const defined = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) as SessionPatch;
      if (s.waiting) return void Object.assign(s.waiting, defined);
      s.waiting = defined;
      s.queued += 1;
      const delay = delayed(HEAD_WRITE_DELAY_MS);
      s.release = delay.release;
      s.chain = s.chain.then(() => delay.done).then(() => writeNext(deps, at, s));
    },
    flush,
    settled: () => {
      s.release?.();
      return s.chain;
    },
    check,
    leaseHeld() {
      if (s.failure) return Promise.reject(s.failure.error);
      if (s.queued === 0) return undefined;
      // Dead when either time passes (leaseDeadAt): nobody can take the lease before then.
      if (Math.min(s.confirmed.expiresAt, s.confirmed.staleAt ?? Infinity) - deps.clock() > at.marginMs) return undefined;
      return flush();
    },
    confirm(lease) {
      s.confirmed.expiresAt = Math.max(s.confirmed.expiresAt, lease.expiresAt);
      if (lease.staleAt !== undefined) s.confirmed.staleAt = Math.max(s.confirmed.staleAt ?? -Infinity, lease.staleAt);
    },
  };
}

/** One link of the queue: the waiting update, under the lease; never rejects (the failure is kept). */
async function writeNext(deps: SessionHeadDeps, at: { sessionId: string; owner: string }, s: HeadState): Promise<void> {
  const patch = s.waiting!;
  s.waiting = undefined;
  s.release = undefined;
  try {
    if (s.failure) return;
    const expiresAt = deps.clock() + deps.config.turn.leaseMs;
    await deps.sessions.updateUnderLease(at.sessionId, at.owner, patch, expiresAt);
    s.confirmed.expiresAt = Math.max(s.confirmed.expiresAt, expiresAt);
  } catch (error) {
    s.failure ??= { error };
  } finally {
    s.queued -= 1;
  }
}

/** A promise that settles after `ms`, or at once when released. */
function delayed(ms: number): { done: Promise<void>; release(): void } {
  let release!: () => void;
  const done = new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    release = () => {
      clearTimeout(timer);
      resolve();
    };
  });
  return { done, release };
}
