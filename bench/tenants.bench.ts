import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RunnerWorkerInit } from '../local/runner-worker.ts';
import { LOCAL_S3_CREDENTIALS, startS3Server } from '../local/s3-server.ts';
import { createTenantWorkerPool, type TenantWorkerPool } from '../local/tenant-worker-pool.ts';
import { createBwrapSandbox } from '../sandbox-runner/isolation/bwrap-sandbox.ts';
import type { RunnerOp, RunnerResponse } from '../sandbox-runner/protocol.ts';
import { createRunner, DEFAULT_RUNNER_LIMITS } from '../sandbox-runner/runner.ts';
import { createS3ClientFactory } from '../sandbox-runner/s3-client.ts';

const BUCKET = 'stratus-bench';
const TENANTS = 8;
const BURST = 16;
const WORKER = fileURLToPath(new URL('../local/runner-worker.ts', import.meta.url));

/**
 * The local cost of per-tenant runner processes (local/tenant-worker-pool.ts): the first call of
 * a new tenant id (fork, load, then the op) against the same call in a warm process and in an
 * in-process runner; each worker's resident memory; and a burst of new tenant ids at once.
 */
export async function run(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'stratus-bench-tenants-'));
  const s3 = await startS3Server({ dir: path.join(dir, 's3'), buckets: [BUCKET] });
  const pool = (name: string): TenantWorkerPool =>
    createTenantWorkerPool({
      entry: WORKER,
      init: (tenantId): RunnerWorkerInit => ({ rootDir: path.join(dir, name, tenantId), s3Endpoint: s3.url, region: 'us-east-1', stackEndpoints: [s3.url] }),
      maxWorkers: BURST + TENANTS,
    });
  const ids = Array.from({ length: TENANTS }, (_, i) => `ws_bench${i}`);
  try {
    const seeding = pool('seed');
    const creates: number[] = [];
    for (const id of ids) creates.push(await call(seeding, id, 0, { type: 'create_workspace', files: { 'a.txt': 'hello\n' } }));
    await seeding.close();

    const p = pool('run');
    const processes = await measureProcesses(p, ids);
    const inProcess = await measureInProcess(dir, s3.url, ids);
    await p.close();

    const burstPool = pool('burst');
    const started = performance.now();
    const each = await Promise.all(
      Array.from({ length: BURST }, (_, i) => call(burstPool, `ws_burst${i}`, 0, { type: 'create_workspace', files: { 'a.txt': 'hello\n' } })),
    );
    const burstMs = performance.now() - started;
    await burstPool.close();

    const { cold, warm, rss } = processes;
    console.log(
      `first create_workspace of a new tenant id (fork + load + op): ${median(creates).toFixed(0)} ms (median of ${TENANTS})\n` +
        `read of a 1-file workspace, new tenant id (cold process + cold materialisation): ${median(cold).toFixed(0)} ms median, ${Math.max(...cold).toFixed(0)} ms max\n` +
        `same read, in-process runner with a fresh disk (cold materialisation only): ${median(inProcess).toFixed(0)} ms\n` +
        `same read, warm process: ${median(warm).toFixed(1)} ms (median of ${warm.length})\n` +
        `→ process cold start adds ≈ ${(median(cold) - median(inProcess)).toFixed(0)} ms per new tenant id\n` +
        `resident memory per runner process (after read + bash): ${median(rss).toFixed(0)} MB median, ${Math.max(...rss).toFixed(0)} MB max\n` +
        `${BURST} new tenant ids at once: all answered in ${burstMs.toFixed(0)} ms (slowest single call ${Math.max(...each).toFixed(0)} ms)`,
    );
  } finally {
    await s3.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const READ: RunnerOp = { type: 'read', path: '/workspace/a.txt' } as RunnerOp;

const request = (id: string, version: number, op: RunnerOp) => ({
  sessionId: 'bench',
  workspace: { bucket: BUCKET, id, version, credentials: { ...LOCAL_S3_CREDENTIALS } },
  op,
});

/** One op through the pool; its duration in ms. */
async function call(p: TenantWorkerPool, id: string, version: number, op: RunnerOp): Promise<number> {
  const started = performance.now();
  const res = (await p.invoke(id, request(id, version, op))) as RunnerResponse;
  if (!res.ok) throw new Error(`${res.error.kind}: ${res.error.message}`);
  return performance.now() - started;
}

/** Per tenant: a cold read (new process), five warm ones, and the process's memory after a Bash call. */
async function measureProcesses(p: TenantWorkerPool, ids: string[]): Promise<{ cold: number[]; warm: number[]; rss: number[] }> {
  const cold: number[] = [];
  const warm: number[] = [];
  const rss: number[] = [];
  for (const id of ids) {
    cold.push(await call(p, id, 1, READ));
    for (let k = 0; k < 5; k++) warm.push(await call(p, id, 1, READ));
    await call(p, id, 1, { type: 'bash', command: 'true', timeoutMs: 30_000 });
    const pid = p.workers().find((w) => w.tenantId === id)!.pid!;
    rss.push(residentMb(pid));
  }
  return { cold, warm, rss };
}

/** The same cold read with an in-process runner on a fresh disk: materialisation without a process start. */
async function measureInProcess(dir: string, s3Endpoint: string, ids: string[]): Promise<number[]> {
  const inProcess: number[] = [];
  const s3ForCredentials = createS3ClientFactory({ region: 'us-east-1', endpoint: s3Endpoint });
  for (const id of ids) {
    const rootDir = path.join(dir, 'inproc', id);
    const runner = createRunner({ rootDir, s3ForCredentials, sandbox: createBwrapSandbox({ runtimeDir: rootDir }), limits: DEFAULT_RUNNER_LIMITS });
    const started = performance.now();
    const res = await runner(request(id, 1, READ));
    if (!res.ok) throw new Error(res.error.message);
    inProcess.push(performance.now() - started);
  }
  return inProcess;
}

function residentMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'))!;
  return Number(line.split(/\s+/)[1]) / 1024;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}
