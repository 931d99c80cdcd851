import { readdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WorkspaceSession } from '../../functions/runner-client/workspace-session.ts';
import { createLogger } from '../../functions/shared/logger.ts';
import { LOCAL_S3_CREDENTIALS } from '../../local/s3-server.ts';
import type { RunnerResponse } from '../../sandbox-runner/protocol.ts';
import type { RunnerWithCopies } from '../../sandbox-runner/runner.ts';
import { BUCKET, bashOutput, expectOk, startRunnerFixture, type RunnerFixture } from '../support/runner-fixture.ts';

const bash = (command: string, background: 'never' | 'now' = 'never') => ({ type: 'bash' as const, command, timeoutMs: 20_000, background });

/** One runner serving many more workspaces than it keeps warm, all at once. */
describe('many workspaces through one runner', () => {
  let fx: RunnerFixture;
  beforeAll(async () => {
    fx = await startRunnerFixture({ maxWarmWorkspaces: 2 });
  });
  afterAll(async () => {
    await fx?.stop();
  });

  const workspacesDir = (runner: string) => path.join(fx.dir, runner, 'workspaces');

  it('keeps every write of concurrent sessions while evicting idle copies, and ends with the warm limit on disk', async () => {
    const sessions = 10;
    const writes = 4;
    const ids = Array.from({ length: sessions }, () => fx.newWorkspaceId());
    // Enough files that deleting a copy takes a while: the window in which an eviction used to
    // race the next op on the same workspace.
    const seed: Record<string, string> = {};
    for (let i = 0; i < 60; i++) seed[`pkg/m${i % 10}/f${i}.txt`] = `file ${i}\n`;
    const failures: RunnerResponse[] = [];
    await Promise.all(
      ids.map(async (id, s) => {
        let version = expectOk(await fx.call(id, 0, { type: 'create_workspace', files: { ...seed, 'f.txt': `seed ${s}\n` } }, { runner: 'busy' })).version;
        for (let w = 0; w < writes; w++) {
          // A model call's worth of pause between tool calls, so ops of other sessions interleave.
          await new Promise((resolve) => setTimeout(resolve, Math.random() * 20));
          const response = await fx.call(id, version, bash(`echo "s${s} w${w}" >> f.txt`), { runner: 'busy' });
          if (!response.ok) failures.push(response);
          else version = response.version;
        }
      }),
    );
    expect(failures).toEqual([]);

    // Every acknowledged write is in the published history (read cold by another runner).
    for (const [s, id] of ids.entries()) {
      const expected = [`seed ${s}`, ...Array.from({ length: writes }, (_, w) => `s${s} w${w}`)].join('\n');
      expect(bashOutput(await fx.call(id, 1 + writes, bash('cat f.txt'), { runner: 'reader' }))).toBe(`${expected}\n`);
    }

    // Once idle, the runner is back at its warm limit, and nothing in memory outlives a copy.
    const runner = fx.runnerAt('busy') as RunnerWithCopies;
    await runner.warmCopies.trim();
    expect(readdirSync(workspacesDir('busy'))).toHaveLength(2);
    expect(runner.warmCopies.stats()).toEqual({ queued: 0, lastUsed: 2, states: 2 });
  }, 120_000);

  it('never evicts a copy whose background command is still running', async () => {
    const id = fx.newWorkspaceId();
    expectOk(await fx.call(id, 0, { type: 'create_workspace', files: { 'a.txt': 'a\n' } }, { runner: 'bg' }));
    const started = expectOk(await fx.call(id, 1, bash('sleep 1.5; echo late > /tmp/late.txt', 'now'), { runner: 'bg' }));
    expect(started.result).toMatchObject({ type: 'bash', backgroundTaskId: expect.any(String) });
    // Three other workspaces pass through a runner that keeps two warm.
    for (let i = 0; i < 3; i++) {
      const other = fx.newWorkspaceId();
      expectOk(await fx.call(other, 0, { type: 'create_workspace', files: { 'b.txt': 'b\n' } }, { runner: 'bg' }));
    }
    expect(readdirSync(workspacesDir('bg'))).toContain(id);
    // Finished, the task wrote into its workspace's /tmp, which therefore still existed.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(bashOutput(await fx.call(id, 1, bash('cat /tmp/late.txt'), { runner: 'bg' }))).toBe('late\n');
  });
});

describe('a version the caller never heard of', () => {
  let fx: RunnerFixture;
  beforeAll(async () => {
    fx = await startRunnerFixture();
  });
  afterAll(async () => {
    await fx?.stop();
  });

  it('is reported once as a conflict naming the newest version, which the session adopts and then works from', async () => {
    const runner = fx.runnerAt('a');
    const session = new WorkspaceSession({
      deps: {
        runner: { invoke: (request) => runner(request) },
        workspaceCredentials: { forWorkspace: async () => ({ ...LOCAL_S3_CREDENTIALS }) },
        config: { bucket: BUCKET },
        log: createLogger({ level: 'error', write: () => {} }),
      },
      sessionId: 'ses_conflict',
      workspace: { id: fx.newWorkspaceId(), version: 0 },
      cwd: '/workspace',
    });
    await session.run({ type: 'create_workspace', files: { 'f.txt': 'seed\n' } });
    expect(session.version).toBe(1);

    // A publish that landed in S3 without the session learning of it (its answer was lost).
    expect(expectOk(await fx.call(session.workspace.id, 1, bash('echo landed >> f.txt'))).version).toBe(2);

    await expect(session.run(bash('echo dropped >> f.txt'))).rejects.toThrow(
      `Your change was not saved: workspace ${session.workspace.id} changed concurrently and is now at version 2. Re-read the files you need and retry.`,
    );
    expect(session.version).toBe(2);

    const next = await session.run(bash('echo after >> f.txt; cat f.txt'));
    expect(next).toMatchObject({ type: 'bash', output: 'seed\nlanded\nafter\n', exitCode: 0 });
    expect(session.version).toBe(3);
  });
});
