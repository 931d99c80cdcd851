import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { MAX_SYNC_PAYLOAD_BYTES, startLambdaInvokeServer } from '../../local/lambda-invoke-server.ts';
import { createTenantWorkerPool, type TenantWorkerPool } from '../../local/tenant-worker-pool.ts';

const PROBE = fileURLToPath(new URL('./probe-tenant-worker.ts', import.meta.url));

type Probe = { pid: number; tenantId: string; payload: { tenant: string } };

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitFor(check: () => boolean, ms = 10_000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('local Lambda Invoke server', () => {
  let server: Awaited<ReturnType<typeof startLambdaInvokeServer>>;
  let lambda: LambdaClient;
  let pool: TenantWorkerPool;
  const crashes: string[] = [];
  beforeAll(async () => {
    pool = createTenantWorkerPool({ entry: PROBE, init: (tenant) => ({ tenant }), onCrash: (info) => crashes.push(info.tenantId) });
    server = await startLambdaInvokeServer({
      functions: {
        echo: async (event) => event,
        big: async () => ({ blob: 'x'.repeat(MAX_SYNC_PAYLOAD_BYTES) }),
        isolated: pool,
      },
    });
    lambda = new LambdaClient({ region: 'us-east-1', endpoint: server.url, credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
  });
  afterAll(async () => {
    await server?.close();
    await pool?.close();
  });

  async function invoke(tenantId: string | undefined, event: unknown) {
    const out = await lambda.send(new InvokeCommand({ FunctionName: 'isolated', TenantId: tenantId, Payload: Buffer.from(JSON.stringify(event)) }));
    return { error: out.FunctionError, body: JSON.parse(Buffer.from(out.Payload!).toString()) };
  }

  it("enforces Lambda's 6 MB payload limits as AWS does", async () => {
    const ok = await lambda.send(new InvokeCommand({ FunctionName: 'echo', Payload: Buffer.from('{"a":1}') }));
    expect(Buffer.from(ok.Payload!).toString()).toBe('{"a":1}');

    const big = await lambda.send(new InvokeCommand({ FunctionName: 'big', Payload: Buffer.from('{}') }));
    expect(big.FunctionError).toBe('Unhandled');
    expect(JSON.parse(Buffer.from(big.Payload!).toString()).errorType).toBe('Function.ResponseSizeTooLarge');

    const tooLarge = lambda.send(new InvokeCommand({ FunctionName: 'echo', Payload: Buffer.from(JSON.stringify({ s: 'y'.repeat(MAX_SYNC_PAYLOAD_BYTES) })) }));
    await expect(tooLarge).rejects.toMatchObject({ name: 'RequestTooLargeException' });
  });

  it('runs each tenant id in its own process and reuses it for the same tenant id', async () => {
    const [a1, b1] = await Promise.all([invoke('tenant-a', { op: 'whoami' }), invoke('tenant-b', { op: 'whoami' })]);
    const a = a1.body as Probe;
    const b = b1.body as Probe;
    expect(a.tenantId).toBe('tenant-a');
    expect(a.payload).toEqual({ tenant: 'tenant-a' });
    expect(b.tenantId).toBe('tenant-b');
    expect(a.pid).not.toBe(b.pid);
    expect([a.pid, b.pid]).not.toContain(process.pid);

    const again = (await invoke('tenant-a', { op: 'whoami' })).body as Probe;
    expect(again.pid).toBe(a.pid);
  });

  it('refuses an invoke without a tenant id for a tenant-isolated function, and one with a tenant id for any other', async () => {
    await expect(invoke(undefined, { op: 'whoami' })).rejects.toMatchObject({
      name: 'InvalidParameterValueException',
      $metadata: { httpStatusCode: 400 },
    });
    const withTenant = lambda.send(new InvokeCommand({ FunctionName: 'echo', TenantId: 'tenant-a', Payload: Buffer.from('{}') }));
    await expect(withTenant).rejects.toMatchObject({ name: 'InvalidParameterValueException' });
    await expect(invoke('no*stars', { op: 'whoami' })).rejects.toMatchObject({ name: 'InvalidParameterValueException' });
  });

  it('answers an invocation whose process died with a function error and starts a new process for the next one', async () => {
    const before = (await invoke('tenant-crash', { op: 'whoami' })).body as Probe;
    const crashed = await invoke('tenant-crash', { op: 'crash' });
    expect(crashed.error).toBe('Unhandled');
    expect(crashed.body).toMatchObject({ errorType: 'Runtime.ExitError', errorMessage: 'Runtime exited with error: exit status 3' });
    expect(crashes).toEqual(['tenant-crash']);
    expect(isAlive(before.pid)).toBe(false);

    const after = (await invoke('tenant-crash', { op: 'whoami' })).body as Probe;
    expect(after.tenantId).toBe('tenant-crash');
    expect(after.pid).not.toBe(before.pid);
    // The server and the other tenants' processes carried on.
    expect(((await invoke('tenant-a', { op: 'whoami' })).body as Probe).tenantId).toBe('tenant-a');
  });

  it("runs an asynchronous (Event) invocation in the tenant's process too", async () => {
    const out = await lambda.send(
      new InvokeCommand({ FunctionName: 'isolated', TenantId: 'tenant-event', InvocationType: 'Event', Payload: Buffer.from('{"op":"whoami"}') }),
    );
    expect(out.StatusCode).toBe(202);
    await server.pending();
    expect(pool.workers().map((w) => w.tenantId)).toContain('tenant-event');
  });
});

describe('tenant worker pool', () => {
  it('caps live processes: stops the least recently used idle one, never one with an invocation in flight', async () => {
    const gone: string[] = [];
    const pool = createTenantWorkerPool({ entry: PROBE, init: (tenant) => ({ tenant }), maxWorkers: 2, onWorkerGone: async (t) => void gone.push(t) });
    try {
      const a = (await pool.invoke('a', { op: 'whoami' })) as Probe;
      const b = (await pool.invoke('b', { op: 'whoami' })) as Probe;
      // a is busy; b is idle: c takes b's place.
      const slow = pool.invoke('a', { op: 'sleep', ms: 5_000 }) as Promise<Probe>;
      await waitFor(() => pool.workers().find((w) => w.tenantId === 'a')?.inFlight === 1);
      const c = (await pool.invoke('c', { op: 'whoami' })) as Probe;
      expect(
        pool
          .workers()
          .map((w) => w.tenantId)
          .sort(),
      ).toEqual(['a', 'c']);
      await waitFor(() => !isAlive(b.pid));
      expect(isAlive(a.pid)).toBe(true);
      // Both live processes busy: d waits for one to go idle rather than stopping it.
      const slowC = pool.invoke('c', { op: 'sleep', ms: 300 }) as Promise<Probe>;
      const d = pool.invoke('d', { op: 'whoami' }) as Promise<Probe>;
      expect((await slowC).pid).toBe(c.pid);
      expect((await d).tenantId).toBe('d');
      expect((await slow).pid).toBe(a.pid);
      await waitFor(() => gone.includes('c'));
      expect(gone).toEqual(['b', 'c']);
    } finally {
      await pool.close();
    }
  });

  it('reaps an idle process, and close() kills every process', async () => {
    const pool = createTenantWorkerPool({ entry: PROBE, init: (tenant) => ({ tenant }), idleMs: 300 });
    const idle = (await pool.invoke('idle', { op: 'whoami' })) as Probe;
    await waitFor(() => !isAlive(idle.pid));
    expect(pool.workers()).toEqual([]);

    const pids = await Promise.all(['x', 'y'].map(async (t) => ((await pool.invoke(t, { op: 'whoami' })) as Probe).pid));
    const pending = expect(pool.invoke('x', { op: 'sleep', ms: 10_000 })).rejects.toMatchObject({ name: 'Runtime.ExitError' });
    await waitFor(() => pool.workers().find((w) => w.tenantId === 'x')?.inFlight === 1);
    await pool.close();
    expect(pids.map(isAlive)).toEqual([false, false]);
    await pending;
    await expect(pool.invoke('z', { op: 'whoami' })).rejects.toThrow('stopped');
  });
});
