import { promises as fs } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectOk, startRunnerFixture, type RunnerFixture } from '../support/runner-fixture.ts';

/** An unexpected runner failure becomes a function error the harness may show; it must not name the runner's disk. */
describe("the runner's unexpected errors", () => {
  let fx: RunnerFixture;
  beforeAll(async () => {
    fx = await startRunnerFixture();
  });
  afterAll(async () => {
    await fx?.stop();
  });

  it("name a workspace's own directories as the sandbox sees them", async () => {
    const id = fx.newWorkspaceId();
    const { version } = expectOk(await fx.call(id, 0, { type: 'create_workspace', files: { 'a.txt': 'a\n' } }, { runner: 'tmp-blocked' }));
    // A file where the workspace's /tmp should be: the next op cannot create it.
    const tmp = path.join(fx.dir, 'tmp-blocked', 'workspaces', id, 'tmp');
    await fs.rm(tmp, { recursive: true, force: true });
    await fs.writeFile(tmp, '');
    const failure = fx.call(id, version, { type: 'read', path: 'a.txt' }, { runner: 'tmp-blocked' });
    await expect(failure).rejects.toThrow("EEXIST: file already exists, mkdir '/tmp'");
    await expect(failure).rejects.not.toThrow(fx.dir);
  });

  it("name the runner's storage outside any workspace without its real path", async () => {
    // A file where the runner keeps its workspaces: no op can start.
    await fs.mkdir(path.join(fx.dir, 'root-blocked'), { recursive: true });
    await fs.writeFile(path.join(fx.dir, 'root-blocked', 'workspaces'), '');
    const failure = fx.call(fx.newWorkspaceId(), 0, { type: 'create_workspace', files: {} }, { runner: 'root-blocked' });
    await expect(failure).rejects.toThrow("mkdir '(runner storage)/workspaces'");
    await expect(failure).rejects.not.toThrow(fx.dir);
  });
});
