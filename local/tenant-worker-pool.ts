import { availableParallelism } from 'node:os';
import { bundleWorker } from './bundle-worker.ts';
import { createStartGate, type StartGate } from './start-gate.ts';
import { RuntimeExitError, spawnTenantWorker, type Worker, type WorkerHooks } from './tenant-worker-process.ts';
import type { ParentMessage } from './tenant-worker.ts';

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

const DEFAULT_IDLE_MS = 10 * 60_000;
const DEFAULT_MAX_WORKERS = 32;
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
  const pool = new WorkerPool(opts);
  return {
    tenantIsolated: true,
    invoke: (tenantId, event) => pool.invoke(tenantId, event),
    workers: () => pool.list(),
    close: () => pool.close(),
  };
}

class WorkerPool {
  private readonly idleMs: number;
  private readonly maxWorkers: number;
  private readonly workers = new Map<string, Worker>();
  /** Workers being started, so concurrent first invokes of one tenant id share one process. */
  private readonly starting = new Map<string, Promise<Worker>>();
  /** Invokes between "a worker was chosen" and "the call is registered": such a worker is not idle. */
  private readonly holds = new Map<string, number>();
  /** Clean-ups of ended workers; a tenant's next worker starts after its previous one's. */
  private readonly gone = new Map<string, Promise<void>>();
  private readonly slotWaiters: (() => void)[] = [];
  private readonly startGate: StartGate = createStartGate(MAX_CONCURRENT_STARTS);
  private readonly hooks: WorkerHooks;
  private reserved = 0;
  private nextId = 1;
  private closed = false;
  private bundle: Promise<string> | undefined;

  constructor(private readonly opts: TenantWorkerPoolOptions) {
    this.idleMs = opts.idleMs ?? DEFAULT_IDLE_MS;
    this.maxWorkers = Math.max(1, opts.maxWorkers ?? DEFAULT_MAX_WORKERS);
    this.hooks = {
      init: (tenantId) => opts.init(tenantId),
      stop: (w) => this.stop(w),
      settled: (w) => this.settle(w),
      ended: (w, { code, signal }) => {
        if (!w.stopping && !this.closed) opts.onCrash?.({ tenantId: w.tenantId, pid: w.child.pid, code, signal });
        this.forget(w);
      },
    };
  }

  async invoke(tenantId: string, event: unknown): Promise<unknown> {
    const w = await this.holding(tenantId, () => this.workerFor(tenantId));
    clearTimeout(w.idleTimer);
    const id = this.nextId++;
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
      this.settle(w);
    });
    return result;
  }

  list(): { tenantId: string; pid: number | undefined; inFlight: number }[] {
    return [...this.workers.values()].map((w) => ({ tenantId: w.tenantId, pid: w.child.pid, inFlight: w.inFlight.size }));
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const wake of this.slotWaiters.splice(0)) wake();
    this.startGate.open();
    const all = [...this.workers.values()];
    for (const w of all) this.stop(w);
    await Promise.all(all.map((w) => w.exited));
    await Promise.all([...this.gone.values()]);
  }

  /** Runs `choose` with the tenant's worker marked as not idle. */
  private async holding(tenantId: string, choose: () => Promise<Worker>): Promise<Worker> {
    this.holds.set(tenantId, (this.holds.get(tenantId) ?? 0) + 1);
    try {
      return await choose();
    } finally {
      const left = (this.holds.get(tenantId) ?? 1) - 1;
      if (left > 0) this.holds.set(tenantId, left);
      else this.holds.delete(tenantId);
    }
  }

  private isIdle(w: Worker): boolean {
    return w.inFlight.size === 0 && !this.holds.get(w.tenantId);
  }

  private wakeOne(): void {
    this.slotWaiters.shift()?.();
  }

  /** Reserves room for one more worker: stops the least recently used idle one if needed, else waits. */
  private async reserveSlot(): Promise<void> {
    for (;;) {
      if (this.closed) throw new Error('The local Lambda runtime is stopped.');
      if (this.workers.size + this.reserved < this.maxWorkers) {
        this.reserved += 1;
        return;
      }
      const idle = [...this.workers.values()].filter((w) => this.isIdle(w)).sort((a, b) => a.lastUsed - b.lastUsed)[0];
      if (idle) {
        this.stop(idle);
        continue;
      }
      await new Promise<void>((resolve) => this.slotWaiters.push(resolve));
    }
  }

  private stop(w: Worker): void {
    w.stopping = true;
    clearTimeout(w.idleTimer);
    this.forget(w);
    w.child.kill('SIGKILL');
  }

  /** Takes an ended or stopping worker out of the pool and schedules its clean-up. */
  private forget(w: Worker): void {
    if (this.workers.get(w.tenantId) !== w) return;
    this.workers.delete(w.tenantId);
    const previous = this.gone.get(w.tenantId) ?? Promise.resolve();
    const cleanup = previous
      .then(() => w.exited)
      .then(() => this.opts.onWorkerGone?.(w.tenantId))
      .catch(() => undefined);
    this.gone.set(w.tenantId, cleanup);
    void cleanup.then(() => {
      if (this.gone.get(w.tenantId) === cleanup) this.gone.delete(w.tenantId);
    });
    this.wakeOne();
  }

  /** After a call ends: wake a waiter if the worker went idle, and arm its idle reaper. */
  private settle(w: Worker): void {
    w.lastUsed = Date.now();
    if (!this.isIdle(w)) return;
    clearTimeout(w.idleTimer);
    w.idleTimer = setTimeout(() => {
      if (this.isIdle(w)) this.stop(w);
    }, this.idleMs);
    w.idleTimer.unref();
    this.wakeOne();
  }

  private workerFor(tenantId: string): Promise<Worker> {
    const live = this.workers.get(tenantId);
    if (live) return Promise.resolve(live);
    let pending = this.starting.get(tenantId);
    if (!pending) {
      pending = this.start(tenantId);
      this.starting.set(tenantId, pending);
      const done = () => this.starting.delete(tenantId);
      void pending.then(done, done);
    }
    return pending;
  }

  private async start(tenantId: string): Promise<Worker> {
    await this.reserveSlot();
    try {
      const file = await this.bundled();
      await this.gone.get(tenantId);
      const release = await this.startGate.acquire();
      if (this.closed) {
        release();
        throw new Error('The local Lambda runtime is stopped.');
      }
      const w = spawnTenantWorker(tenantId, file, this.hooks);
      void w.ready.then(release, release);
      this.workers.set(tenantId, w);
      return w;
    } finally {
      this.reserved -= 1;
    }
  }

  private bundled(): Promise<string> {
    if (!this.bundle) {
      this.bundle = bundleWorker(this.opts.entry);
      this.bundle.catch(() => (this.bundle = undefined)); // a failed build is tried again by the next start
    }
    return this.bundle;
  }
}
