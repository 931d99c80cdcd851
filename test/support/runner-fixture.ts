import path from 'node:path';
import { createBwrapSandbox } from '../../sandbox-runner/isolation/bwrap-sandbox.ts';
import type { RunnerOp, RunnerResponse, RunnerSuccess } from '../../sandbox-runner/protocol.ts';
import { createRunner, DEFAULT_RUNNER_LIMITS, type Runner, type RunnerDeps } from '../../sandbox-runner/runner.ts';
import { createS3ClientFactory } from '../../sandbox-runner/s3-client.ts';
import { LOCAL_S3_CREDENTIALS, startS3Server } from '../../local/s3-server.ts';
import { makeTempDir } from './temp-dir.ts';

export const BUCKET = 'stratus-test';

/**
 * The runner against the real local S3 server, in a temp dir. `runnerAt(name)` gives a runner
 * with its own disk (a different "container"), so cold and concurrent cases are real.
 */
export async function startRunnerFixture(overrides: Partial<RunnerDeps> = {}) {
  const temp = makeTempDir('stratus-runner-');
  const s3 = await startS3Server({ dir: path.join(temp.dir, 's3'), buckets: [BUCKET] });
  const s3ForCredentials = createS3ClientFactory({ region: 'us-east-1', endpoint: s3.url });
  const runners = new Map<string, Runner>();
  const runnerAt = (name: string): Runner => {
    let r = runners.get(name);
    if (!r) {
      const rootDir = path.join(temp.dir, name);
      r = createRunner({
        rootDir,
        s3ForCredentials,
        sandbox: createBwrapSandbox({ runtimeDir: rootDir }),
        limits: DEFAULT_RUNNER_LIMITS,
        ...overrides,
      });
      runners.set(name, r);
    }
    return r;
  };
  let counter = 0;
  return {
    dir: temp.dir,
    s3,
    s3Client: s3ForCredentials({ ...LOCAL_S3_CREDENTIALS }),
    runnerAt,
    newWorkspaceId: () => `ws_test_${process.pid}_${++counter}`,
    /** Sends one op for workspace `id` at `version` to the runner called `runner` (default "a"). */
    async call(
      id: string,
      version: number,
      op: RunnerOp,
      opts: { runner?: string; cwd?: string; env?: Record<string, string>; allowedDomains?: string[] } = {},
    ): Promise<RunnerResponse> {
      return runnerAt(opts.runner ?? 'a')({
        sessionId: 'ses_test',
        workspace: { bucket: BUCKET, id, version, credentials: { ...LOCAL_S3_CREDENTIALS } },
        cwd: opts.cwd ?? '/workspace',
        env: opts.env ?? {},
        network: { allowedDomains: opts.allowedDomains ?? [] },
        op,
      });
    },
    async stop() {
      await s3.close();
      temp.cleanup();
    },
  };
}

export type RunnerFixture = Awaited<ReturnType<typeof startRunnerFixture>>;

export function expectOk(response: RunnerResponse): RunnerSuccess {
  if (!response.ok) throw new Error(`runner failed: ${response.error.kind}: ${response.error.message}`);
  return response;
}

export function bashOutput(response: RunnerResponse): string {
  const ok = expectOk(response);
  if (ok.result.type !== 'bash') throw new Error(`expected a bash result, got ${ok.result.type}`);
  return ok.result.output;
}
