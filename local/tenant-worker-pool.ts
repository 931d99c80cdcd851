import { fork, type ChildProcess } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { bundleWorker } from './bundle-worker.ts';
import type { ChildMessage, ParentMessage } from './tenant-worker.ts';

/**
 * A function the local Invoke server runs in Lambda's per-tenant isolation mode: every invoke
 * names a tenant id, and invocations of different tenant ids never share a process.
 */
export interface TenantIsolatedFunction {
  readonly tenantIsolated: true;
  invoke(tenantId: string, event: unknown): Promise<unknown>;
}

export interface TenantWorkerPoolOptions {
  /** The TypeScript module each worker process runs (bundled first); it calls `serveTenantWorker` (tenant-worker.ts). */
  entry: string;
  /** The init message for a tenant's worker (what it builds its handler from). */
  init(tenantId: string): unknown;
  /** Stop a worker after this long without an invocation. @default 10 minutes */
  idleMs?: number;
  /** Live workers at most. Beyond it the least recently used idle worker is stopped, or the invoke waits for one to go idle. @default 32 */
  maxWorkers?: number;
  /** Runs when a tenant's worker has ended (reaped, evicted, crashed, stopped), before the tenant may get a new one: throw away what it kept, as Lambda discards an environment's /tmp. */
  onWorkerGone?(tenantId: string): Promise<void>;
  /** A worker ended on its own (crashed), with invocations in flight or not. */
  onCrash?(info: { tenantId: string; pid: number | undefined; code: number | null; signal: NodeJS.Signals | null }): void;
}

export interface TenantWorkerPool extends TenantIsolatedFunction {
  /** The live workers, for logs and figures. */
  workers(): { tenantId: string; pid: number | undefined; inFlight: number }[];
  /** Kills every worker and refuses further invocations. */
  close(): Promise<void>;
}

/** What a process exit looks like to the caller: Lambda's error for a runtime that exited mid-invocation. */
export class RuntimeExitError extends Error {
  override name = 'Runtime.ExitError';
}

interface Worker {
  tenantId: string;
  child: ChildProcess;
  ready: Promise<void>;
  inFlight: Map<number, { resolve(value: unknown): void; reject(err: Error): void }>;
  lastUsed: number;
  idleTimer?: NodeJS.Timeout;
  /** Set once the pool stopped it on purpose (its exit is not a crash). */
  stopping: boolean;
  exited: Promise<void>;
}

const DEFAULT_IDLE_MS = 10 * 60_000;
const DEFAULT_MAX_WORKERS = 32;
/** A worker that has not said `ready` by then (counted from its fork) is treated as crashed. */
const START_TIMEOUT_MS = 60_000;
/**
 * Workers starting at once. A start is CPU-bound (~0.6 s of loading modules); fifty started
 * together on two cores each took the whole burst's time, past the start timeout, and were
 * killed. Starting them a few at a time makes every start quick and the burst no slower.
 */
const MAX_CONCURRENT_STARTS = Math.max(2, availableParallelism());

/**
 * One child process per tenant id, the local counterpart of Lambda's tenant isolation mode: the
 * first invoke of a tenant id forks a worker (a cold start), later ones reuse it, and a worker
 * never serves another tenant id. A worker that exits answers its invocations in flight with
 * `Runtime.ExitError` and is replaced on the next invoke; the pool itself never fails with it.
 * Idle workers are reaped after `idleMs` and the number of live ones is capped; a worker with an
 * invocation in flight is never stopped.
 */
export function createTenantWorkerPool(opts: TenantWorkerPoolOptions): TenantWorkerPool {
  const idleMs = opts.idleMs ?? DEFAULT_IDLE_MS;
  const maxWorkers = Math.max(1, opts.maxWorkers ?? DEFAULT_MAX_WORKERS);
  const workers = new Map<string, Worker>();
  /** Workers being started, so concurrent first invokes of one tenant id share one process. */
  const starting = new Map<string, Promise<Worker>>();
  /** Invokes between "a worker was chosen" and "the call is registered": such a worker is not idle. */
  const holds = new Map<string, number>();
  /** Clean-ups of ended workers; a tenant's next worker starts after its previous one's. */
  const gone = new Map<string, Promise<void>>();
  const slotWaiters: (() => void)[] = [];
  const startWaiters: (() => void)[] = [];
  let starts = 0;
  let reserved = 0;
  let nextId = 1;
  let closed = false;
  let bundle: Promise<string> | undefined;

  function isIdle(w: Worker): boolean {
    return w.inFlight.size === 0 && !holds.get(w.tenantId);
  }

  function wakeOne(): void {
    slotWaiters.shift()?.();
  }

  /** Reserves room for one more worker: stops the least recently used idle one if needed, else waits. */
  async function reserveSlot(): Promise<void> {
    for (;;) {
      if (closed) throw new Error('The local Lambda runtime is stopped.');
      if (workers.size + reserved < maxWorkers) {
        reserved += 1;
        return;
      }
      const idle = [...workers.values()].filter(isIdle).sort((a, b) => a.lastUsed - b.lastUsed)[0];
      if (idle) {
        stop(idle);
        continue;
      }
      await new Promise<void>((resolve) => slotWaiters.push(resolve));
    }
  }

  /** Waits for a start slot; the returned function gives it back (once the worker is ready or gone). */
  async function startSlot(): Promise<() => void> {
    while (starts >= MAX_CONCURRENT_STARTS && !closed) await new Promise<void>((resolve) => startWaiters.push(resolve));
    starts += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      starts -= 1;
      startWaiters.shift()?.();
    };
  }

  function stop(w: Worker): void {
    w.stopping = true;
    clearTimeout(w.idleTimer);
    forget(w);
    w.child.kill('SIGKILL');
  }

  /** Takes an ended or stopping worker out of the pool and schedules its clean-up. */
  function forget(w: Worker): void {
    if (workers.get(w.tenantId) !== w) return;
    workers.delete(w.tenantId);
    const previous = gone.get(w.tenantId) ?? Promise.resolve();
    const cleanup = previous
      .then(() => w.exited)
      .then(() => opts.onWorkerGone?.(w.tenantId))
      .catch(() => undefined);
    gone.set(w.tenantId, cleanup);
    void cleanup.then(() => {
      if (gone.get(w.tenantId) === cleanup) gone.delete(w.tenantId);
    });
    wakeOne();
  }

  function spawn(tenantId: string, file: string): Worker {
    const child = fork(file, [], { execArgv: [], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    let markReady!: () => void;
    let failStart!: (err: Error) => void;
    const ready = new Promise<void>((resolve, reject) => {
      markReady = resolve;
      failStart = reject;
    });
    ready.catch(() => undefined);
    let markExited!: () => void;
    const w: Worker = {
      tenantId,
      child,
      ready,
      inFlight: new Map(),
      lastUsed: Date.now(),
      stopping: false,
      exited: new Promise((resolve) => (markExited = resolve)),
    };
    const startTimer = setTimeout(() => {
      failStart(new RuntimeExitError(`Runtime failed to start within ${START_TIMEOUT_MS / 1000} s.`));
      stop(w);
    }, START_TIMEOUT_MS);
    let ended = false;
    const end = (code: number | null, signal: NodeJS.Signals | null) => {
      if (ended) return;
      ended = true;
      clearTimeout(startTimer);
      clearTimeout(w.idleTimer);
      const err = new RuntimeExitError(`Runtime exited with error: ${signal ? `signal: ${signal}` : `exit status ${code}`}`);
      failStart(err);
      for (const call of w.inFlight.values()) call.reject(err);
      w.inFlight.clear();
      if (!w.stopping && !closed) opts.onCrash?.({ tenantId, pid: child.pid, code, signal });
      markExited();
      forget(w);
    };
    child.on('message', (message: ChildMessage) => {
      if (message.type === 'ready') {
        clearTimeout(startTimer);
        try {
          child.send({ type: 'init', tenantId, payload: opts.init(tenantId) } satisfies ParentMessage);
          markReady();
        } catch (err) {
          failStart(new RuntimeExitError(`Runtime failed to start: ${err instanceof Error ? err.message : String(err)}`));
          stop(w);
        }
        return;
      }
      const call = w.inFlight.get(message.id);
      if (!call) return;
      w.inFlight.delete(message.id);
      if (message.ok) call.resolve(message.value);
      else call.reject(Object.assign(new Error(message.error.message), { name: message.error.name, stack: message.error.stack }));
      settle(w);
    });
    child.once('exit', end);
    // A failed fork or a broken IPC channel: the process is unusable, as if it had exited (a
    // fork that never started emits no 'exit').
    child.on('error', () => {
      child.kill('SIGKILL');
      if (child.pid === undefined) end(null, null);
    });
    return w;
  }

  /** After a call ends: wake a waiter if the worker went idle, and arm its idle reaper. */
  function settle(w: Worker): void {
    w.lastUsed = Date.now();
    if (!isIdle(w)) return;
    clearTimeout(w.idleTimer);
    w.idleTimer = setTimeout(() => {
      if (isIdle(w)) stop(w);
    }, idleMs);
    w.idleTimer.unref();
    wakeOne();
  }

  async function workerFor(tenantId: string): Promise<Worker> {
    const live = workers.get(tenantId);
    if (live) return live;
    let pending = starting.get(tenantId);
    if (!pending) {
      pending = (async () => {
        await reserveSlot();
        try {
          if (!bundle) {
            bundle = bundleWorker(opts.entry);
            bundle.catch(() => (bundle = undefined)); // a failed build is tried again by the next start
          }
          const file = await bundle;
          await gone.get(tenantId);
          const release = await startSlot();
          if (closed) {
            release();
            throw new Error('The local Lambda runtime is stopped.');
          }
          const w = spawn(tenantId, file);
          void w.ready.then(release, release);
          workers.set(tenantId, w);
          return w;
        } finally {
          reserved -= 1;
        }
      })();
      starting.set(tenantId, pending);
      void pending.then(
        () => starting.delete(tenantId),
        () => starting.delete(tenantId),
      );
    }
    return pending;
  }

  return {
    tenantIsolated: true,
    async invoke(tenantId, event) {
      holds.set(tenantId, (holds.get(tenantId) ?? 0) + 1);
      let w: Worker;
      try {
        w = await workerFor(tenantId);
      } finally {
        const left = (holds.get(tenantId) ?? 1) - 1;
        if (left > 0) holds.set(tenantId, left);
        else holds.delete(tenantId);
      }
      clearTimeout(w.idleTimer);
      const id = nextId++;
      const result = new Promise<unknown>((resolve, reject) => w.inFlight.set(id, { resolve, reject }));
      result.catch(() => undefined); // handled by the caller; this only keeps an early exit from counting as unhandled
      // Registered before the worker is ready, so a starting worker counts as busy. If it never
      // becomes ready, its exit answers the call with Runtime.ExitError.
      await w.ready.catch(() => undefined);
      if (!w.inFlight.has(id)) return result;
      w.child.send({ type: 'invoke', id, event } satisfies ParentMessage, (err) => {
        if (!err) return;
        const call = w.inFlight.get(id);
        w.inFlight.delete(id);
        call?.reject(new RuntimeExitError(`Runtime unreachable: ${err.message}`));
        settle(w);
      });
      return result;
    },
    workers: () => [...workers.values()].map((w) => ({ tenantId: w.tenantId, pid: w.child.pid, inFlight: w.inFlight.size })),
    async close() {
      closed = true;
      for (const wake of slotWaiters.splice(0)) wake();
      for (const wake of startWaiters.splice(0)) wake();
      const all = [...workers.values()];
      for (const w of all) stop(w);
      await Promise.all(all.map((w) => w.exited));
      await Promise.all([...gone.values()]);
    },
  };
}
