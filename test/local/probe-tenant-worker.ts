import { serveTenantWorker } from '../../local/tenant-worker.ts';

/**
 * A tenant worker for the pool's tests: it reports who it is (pid, tenant id, init payload),
 * waits when asked, and dies mid-invocation when asked, like a runtime that crashed.
 */
serveTenantWorker((payload, tenantId) => async (event) => {
  const e = event as { op: 'whoami' } | { op: 'sleep'; ms: number } | { op: 'crash' };
  if (e.op === 'crash') setImmediate(() => process.exit(3));
  if (e.op === 'crash') return new Promise(() => undefined);
  if (e.op === 'sleep') await new Promise((resolve) => setTimeout(resolve, e.ms));
  return { pid: process.pid, tenantId, payload };
});
