import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startS3Server } from '../local/s3-server.ts';
import { createBwrapSandbox } from '../sandbox-runner/isolation/bwrap-sandbox.ts';
import { createRunner, DEFAULT_RUNNER_LIMITS, type Runner } from '../sandbox-runner/runner.ts';
import { createS3ClientFactory } from '../sandbox-runner/s3-client.ts';

export const BENCH_BUCKET = 'stratus-bench';

export interface BenchRunners {
  dir: string;
  s3: Awaited<ReturnType<typeof startS3Server>>;
  /** A runner with its own root under `dir` (a fresh one is a cold container), on the hardened bwrap sandbox. */
  runner(name: string): Runner;
  close(): Promise<void>;
}

/** What the runner benchmarks share: a temp folder, the real local S3 server in it, and runners on it. */
export async function startBenchRunners(prefix: string): Promise<BenchRunners> {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  const s3 = await startS3Server({ dir: path.join(dir, 's3'), buckets: [BENCH_BUCKET] });
  const s3ForCredentials = createS3ClientFactory({ region: 'us-east-1', endpoint: s3.url });
  const runner = (name: string): Runner =>
    createRunner({
      rootDir: path.join(dir, name),
      s3ForCredentials,
      sandbox: createBwrapSandbox({ runtimeDir: path.join(dir, 'rt') }),
      limits: DEFAULT_RUNNER_LIMITS,
    });
  return {
    dir,
    s3,
    runner,
    async close() {
      await s3.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
