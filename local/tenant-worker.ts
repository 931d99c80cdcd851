/**
 * The child side of a tenant worker (see tenant-worker-pool.ts): a process that serves one
 * tenant id's invocations over IPC, like one Lambda execution environment. It announces itself
 * with `ready`, builds its handler from the first `init` message, then answers each `invoke` with
 * a `result`. An uncaught error ends the process, as it ends a Lambda runtime; the pool answers
 * the invocations in flight with a function error and starts a fresh process for the next one.
 */

export type WorkerHandler = (event: unknown) => Promise<unknown>;

export type ParentMessage = { type: 'init'; tenantId: string; payload: unknown } | { type: 'invoke'; id: number; event: unknown };

export type ChildMessage =
  | { type: 'ready' }
  | { type: 'result'; id: number; ok: true; value: unknown }
  | { type: 'result'; id: number; ok: false; error: { name: string; message: string; stack?: string } };

export function serveTenantWorker(build: (payload: unknown, tenantId: string) => WorkerHandler): void {
  // A send can fail only when the pool is gone; nobody wants the answer then, and 'disconnect' ends the process.
  const send = (message: ChildMessage) => process.send?.(message, undefined, undefined, () => undefined);
  let handler: WorkerHandler | undefined;
  process.on('message', (message: ParentMessage) => {
    if (message.type === 'init') {
      handler = build(message.payload, message.tenantId);
      return;
    }
    if (message.type !== 'invoke') return;
    const run = handler ? handler(message.event) : Promise.reject(new Error('The worker received an invocation before its init message.'));
    run.then(
      (value) => send({ type: 'result', id: message.id, ok: true, value: value ?? null }),
      (err: unknown) => {
        const e = err instanceof Error ? err : new Error(String(err));
        send({ type: 'result', id: message.id, ok: false, error: { name: e.name, message: e.message, stack: e.stack } });
      },
    );
  });
  // The pool is gone (stopped or crashed): nothing will ever be asked of this process again.
  process.on('disconnect', () => process.exit(0));
  send({ type: 'ready' });
}
