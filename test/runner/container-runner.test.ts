import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_S3_CREDENTIALS, startS3Server } from '../../local/s3-server.ts';
import { createContainerRunner } from '../../sandbox-runner/container-runner.ts';
import type { RunnerOp } from '../../sandbox-runner/protocol.ts';
import type { Runner } from '../../sandbox-runner/runner.ts';
import { makeTempDir } from '../support/temp-dir.ts';
import { bashOutput, expectOk } from './runner-fixture.ts';

/** The Lambda container's runner, in the no-namespaces mode it uses inside AWS. */
describe('container runner (process sandbox, as inside Lambda)', () => {
  const temp = makeTempDir('stratus-container-');
  let s3: Awaited<ReturnType<typeof startS3Server>>;
  let runner: Runner;
  beforeAll(async () => {
    s3 = await startS3Server({ dir: path.join(temp.dir, 's3'), buckets: ['b'] });
    runner = createContainerRunner({
      STRATUS_RUNNER_ROOT: path.join(temp.dir, 'root'),
      STRATUS_SANDBOX: 'process',
      STRATUS_S3_ENDPOINT: s3.url,
      AWS_REGION: 'us-east-1',
    });
  });
  afterAll(async () => {
    await s3?.close();
    temp.cleanup();
  });

  const call = (id: string, version: number, op: RunnerOp, cwd = '/workspace') =>
    runner({ sessionId: 's', workspace: { bucket: 'b', id, version, credentials: { ...LOCAL_S3_CREDENTIALS } }, cwd, op });

  it('runs commands with a scrubbed environment, carries the cwd, and holds one workspace at a time', async () => {
    process.env.AWS_SECRET_ACCESS_KEY_FOR_TEST = 'runner-role-secret';
    try {
      expectOk(await call('one', 0, { type: 'create_workspace', files: { 'sub/a.txt': 'from one\n' } }));
      const ran = expectOk(await call('one', 1, { type: 'bash', command: 'cat sub/a.txt; env | grep -c SECRET; cd sub', timeoutMs: 10_000 }));
      expect(bashOutput(ran)).toBe('from one\n0\n');
      expect(ran.cwd).toBe('/workspace/sub');

      expectOk(await call('two', 0, { type: 'create_workspace', files: { 'b.txt': 'two\n' } }));
      const workspaces = await import('node:fs').then((fs) => fs.readdirSync(path.join(temp.dir, 'root', 'workspaces')));
      expect(workspaces).toEqual(['two']);
      expect(bashOutput(await call('two', 1, { type: 'bash', command: 'ls; ls ../../one 2>&1 | head -c 2', timeoutMs: 10_000 }))).toBe('b.txt\nls');
    } finally {
      delete process.env.AWS_SECRET_ACCESS_KEY_FOR_TEST;
    }
  });
});
