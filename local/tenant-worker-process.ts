import { fork, type ChildProcess } from 'node:child_process';
import type { ChildMessage, ParentMessage } from './tenant-worker.ts';

/** What a process exit looks like to the caller: Lambda's error for a runtime that exited mid-invocation. */
export class RuntimeExitError extends Error {
  override name = 'Runtime.ExitError';
}

/** One forked tenant worker (tenant-worker.ts on the child side) and its calls in flight. */
export interface Worker {
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

/** What the pool does when a worker's life changes; the process module holds no pool state. */
export interface WorkerHooks {
  /** The init message payload for a tenant's worker. */
  init(tenantId: string): unknown;
  /** Kill a worker on purpose (it failed to start). */
  stop(w: Worker): void;
  /** A call of this worker got its answer. */
  settled(w: Worker): void;
  /** The worker's process is gone (`w.stopping` tells whether the pool stopped it on purpose). */
  ended(w: Worker, info: { code: number | null; signal: NodeJS.Signals | null }): void;
}

/** A worker that has not said `ready` by then (counted from its fork) is treated as crashed. */
const START_TIMEOUT_MS = 60_000;

interface Lifecycle {
  markReady(): void;
  failStart(err: Error): void;
  markExited(): void;
}

function newWorker(tenantId: string, child: ChildProcess): { w: Worker; life: Lifecycle } {
  const life = {} as Lifecycle;
  const ready = new Promise<void>((resolve, reject) => {
    life.markReady = resolve;
    life.failStart = reject;
  });
  ready.catch(() => undefined);
  const exited = new Promise<void>((resolve) => (life.markExited = resolve));
  const w: Worker = { tenantId, child, ready, inFlight: new Map(), lastUsed: Date.now(), stopping: false, exited };
  return { w, life };
}

/** The child said `ready`: send it its init message. */
function initialize(w: Worker, life: Lifecycle, hooks: WorkerHooks): void {
  try {
    w.child.send({ type: 'init', tenantId: w.tenantId, payload: hooks.init(w.tenantId) } satisfies ParentMessage);
    life.markReady();
  } catch (err) {
    life.failStart(new RuntimeExitError(`Runtime failed to start: ${err instanceof Error ? err.message : String(err)}`));
    hooks.stop(w);
  }
}

function answer(w: Worker, message: Extract<ChildMessage, { type: 'result' }>, hooks: WorkerHooks): void {
  const call = w.inFlight.get(message.id);
  if (!call) return;
  w.inFlight.delete(message.id);
  if (message.ok) call.resolve(message.value);
  else call.reject(Object.assign(new Error(message.error.message), { name: message.error.name, stack: message.error.stack }));
  hooks.settled(w);
}

/**
 * Forks one tenant's worker. Its calls in flight are answered with `Runtime.ExitError` when the
 * process ends, and a worker that never says `ready` within START_TIMEOUT_MS is stopped.
 */
export function spawnTenantWorker(tenantId: string, file: string, hooks: WorkerHooks): Worker {
  const child = fork(file, [], { execArgv: [], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const { w, life } = newWorker(tenantId, child);
  const startTimer = setTimeout(() => {
    life.failStart(new RuntimeExitError(`Runtime failed to start within ${START_TIMEOUT_MS / 1000} s.`));
    hooks.stop(w);
  }, START_TIMEOUT_MS);
  let ended = false;
  const end = (code: number | null, signal: NodeJS.Signals | null) => {
    if (ended) return;
    ended = true;
    clearTimeout(startTimer);
    clearTimeout(w.idleTimer);
    const err = new RuntimeExitError(`Runtime exited with error: ${signal ? `signal: ${signal}` : `exit status ${code}`}`);
    life.failStart(err);
    for (const call of w.inFlight.values()) call.reject(err);
    w.inFlight.clear();
    life.markExited();
    hooks.ended(w, { code, signal });
  };
  child.on('message', (message: ChildMessage) => {
    if (message.type !== 'ready') return answer(w, message, hooks);
    clearTimeout(startTimer);
    initialize(w, life, hooks);
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
