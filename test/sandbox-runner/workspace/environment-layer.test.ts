import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_S3_CREDENTIALS } from '../../../local/s3-server.ts';
import type { RunnerOp, RunnerResponse } from '../../../sandbox-runner/protocol.ts';
import { environmentLayerKey } from '../../../sandbox-runner/common/environment-layer-key.ts';
import { makeTarGz, readTarGz } from '../../support/archive-fixtures.ts';
import { BUCKET, bashOutput, expectOk, startRunnerFixture, type RunnerFixture } from '../../support/runner-fixture.ts';

const bash = (command: string): RunnerOp => ({ type: 'bash', command, timeoutMs: 20_000 });
const FP_A = 'a'.repeat(64);
const FP_B = 'b'.repeat(64);
const keyOf = (fingerprint: string, tenant = 'acme') => environmentLayerKey(tenant, { owner: 'Octo', name: 'App' }, fingerprint);

/** `npm ci` as far as the layer cares: 120 files of dependencies, more than the workspace's file limit of 50. */
const INSTALL =
  'mkdir -p node_modules/.bin packages/web/node_modules/left-pad && for i in $(seq 1 100); do echo "dep $i" > node_modules/dep$i.js; done && ' +
  'for i in $(seq 1 20); do echo "pad $i" > packages/web/node_modules/left-pad/f$i.js; done && ln -s ../dep1.js node_modules/.bin/dep1 && echo built > BUILD_INFO';

describe('cached environment layer (runner)', () => {
  let fx: RunnerFixture;
  beforeAll(async () => {
    fx = await startRunnerFixture({ workspaceLimits: { maxFiles: 50, maxBytes: 8_000_000, maxFileBytes: 4_000_000 } });
  });
  afterAll(async () => {
    await fx?.stop();
  });

  function call(runner: string, id: string, version: number, op: RunnerOp, layer?: { key: string; maxBytes?: number }): Promise<RunnerResponse> {
    return fx.runnerAt(runner)({
      sessionId: 'ses_env',
      workspace: { bucket: BUCKET, id, version, credentials: { ...LOCAL_S3_CREDENTIALS } },
      ...(layer ? { environment: { key: layer.key, credentials: { ...LOCAL_S3_CREDENTIALS }, maxBytes: layer.maxBytes ?? 1_000_000 } } : {}),
      op,
    });
  }
  async function seed(id: string, files: Record<string, string> = {}): Promise<number> {
    const created = expectOk(
      await call('seed', id, 0, {
        type: 'create_workspace',
        files: { 'package.json': '{}', 'package-lock.json': '{"v":1}', 'packages/web/index.js': 'x', ...files },
      }),
    );
    return created.version;
  }
  async function putLayer(key: string, body: Buffer): Promise<void> {
    await fx.s3Client.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: body }));
  }
  const treeOf = (runner: string, id: string) => path.join(fx.dir, runner, 'workspaces', id, 'tree');

  it('keeps dependency directories out of the workspace, saves them as one layer and restores it in a fresh runner', async () => {
    const id = fx.newWorkspaceId();
    const layer = { key: keyOf(FP_A) };
    const v1 = await seed(id);
    expect(expectOk(await call('a', id, v1, { type: 'environment_restore' }, layer)).result).toEqual({
      type: 'environment_restore',
      layer: { status: 'absent' },
    });

    // The set-up: 120 dependency files would pass the 50-file workspace limit; only BUILD_INFO is workspace content.
    const setup = expectOk(await call('a', id, v1, bash(INSTALL), layer));
    expect(setup.version).toBe(v1 + 1);
    expect(setup.changedFiles).toBe(1);
    const listed = expectOk(await call('a', id, setup.version, { type: 'list_files' }));
    expect((listed.result as { files: { path: string }[] }).files.map((f) => f.path)).toEqual([
      'BUILD_INFO',
      'package-lock.json',
      'package.json',
      'packages',
      'packages/web',
      'packages/web/index.js',
    ]);

    const saved = expectOk(await call('a', id, setup.version, { type: 'environment_save' }, layer));
    expect(saved.result).toMatchObject({ type: 'environment_save', saved: true, files: 120, roots: ['node_modules', 'packages/web/node_modules'] });
    const stored = await readTarGz(
      Buffer.from(await (await fx.s3Client.send(new GetObjectCommand({ Bucket: BUCKET, Key: layer.key }))).Body!.transformToByteArray()),
    );
    expect(stored.every((e) => e.name.startsWith('node_modules') || e.name.startsWith('packages/web/node_modules'))).toBe(true);
    expect(stored.find((e) => e.name === 'node_modules/.bin/dep1')).toMatchObject({ type: 'symlink', linkname: '../dep1.js' });

    // Another container: the workspace from its snapshot, the layer in one GET beside it (one
    // request more than the same cold start without the layer).
    let before = fx.s3.traffic().requests;
    expectOk(await call('c', id, setup.version, { type: 'list_files' }));
    const withoutLayer = fx.s3.traffic().requests - before;
    before = fx.s3.traffic().requests;
    const restored = expectOk(await call('b', id, setup.version, { type: 'environment_restore' }, layer));
    expect(restored.result).toMatchObject({ layer: { status: 'restored', roots: ['node_modules', 'packages/web/node_modules'], files: 120 } });
    expect(fx.s3.traffic().requests - before).toBe(withoutLayer + 1);
    expect(
      bashOutput(
        await call(
          'b',
          id,
          setup.version,
          bash('cat node_modules/dep7.js packages/web/node_modules/left-pad/f3.js && node_modules/.bin/dep1 2>/dev/null; readlink node_modules/.bin/dep1'),
          layer,
        ),
      ),
    ).toBe('dep 7\npad 3\n../dep1.js\n');
    expect(expectOk(await call('b', id, setup.version, { type: 'environment_restore' }, layer)).result).toMatchObject({ layer: { status: 'present' } });

    // The agent's change: one workspace file; a change inside the layer is not workspace content.
    const edit = expectOk(await call('b', id, setup.version, bash('echo y >> packages/web/index.js && echo patched > node_modules/dep2.js'), layer));
    expect(edit.changedFiles).toBe(1);
    const diff = expectOk(await call('b', id, edit.version, { type: 'workspace_diff', from: v1, to: edit.version }));
    expect((diff.result as { files: { path: string }[] }).files.map((f) => f.path)).toEqual(['BUILD_INFO', 'packages/web/index.js']);
    const archive = expectOk(await call('b', id, edit.version, { type: 'export_archive' }));
    const exported = await readTarGz(
      Buffer.from(
        await (await fx.s3Client.send(new GetObjectCommand({ Bucket: BUCKET, Key: (archive.result as { key: string }).key }))).Body!.transformToByteArray(),
      ),
    );
    expect(exported.some((e) => e.name.includes('node_modules'))).toBe(false);
  });

  it('counts dependency directories as workspace files in a session without an environment', async () => {
    const id = fx.newWorkspaceId();
    const v1 = await seed(id);
    const res = await call('a', id, v1, bash(INSTALL));
    expect(res.ok).toBe(false);
    if (!res.ok) expect(res.error.kind).toBe('limit');
  });

  it('keeps a dependency directory the repository commits as workspace content', async () => {
    const id = fx.newWorkspaceId();
    const v1 = await seed(id, { 'vendor/lib/a.go': 'package lib' });
    const layer = { key: keyOf(FP_A, 'vendored') };
    const res = expectOk(await call('a', id, v1, bash('echo more > vendor/lib/b.go && mkdir -p node_modules && echo x > node_modules/x.js'), layer));
    expect(res.changedFiles).toBe(1);
    const saved = expectOk(await call('a', id, res.version, { type: 'environment_save' }, layer));
    expect(saved.result).toMatchObject({ saved: true, roots: ['node_modules'], files: 1 });
  });

  it('swaps the layer when the fingerprint changes, and removes the old one from the tree', async () => {
    const id = fx.newWorkspaceId();
    const v1 = await seed(id);
    const a = { key: keyOf(FP_A, 'swap') };
    const setup = expectOk(await call('a', id, v1, bash('mkdir node_modules && echo old > node_modules/old.js'), a));
    expectOk(await call('a', id, setup.version, { type: 'environment_save' }, a));
    await putLayer(
      keyOf(FP_B, 'swap'),
      await makeTarGz([
        { name: 'node_modules/', type: 'directory', mode: 0o755 },
        { name: 'node_modules/new.js', body: 'new\n' },
      ]),
    );
    expect(expectOk(await call('a', id, setup.version, { type: 'environment_restore' }, { key: keyOf(FP_B, 'swap') })).result).toMatchObject({
      layer: { status: 'restored', files: 1 },
    });
    expect(bashOutput(await call('a', id, setup.version, bash('ls node_modules'), { key: keyOf(FP_B, 'swap') }))).toBe('new.js\n');
  });

  it('refuses hostile layers: escapes, links to write through, workspace paths, bombs and oversized ones', async () => {
    const id = fx.newWorkspaceId();
    const v1 = await seed(id);
    const runner = 'hostile';
    const tree = treeOf(runner, id);
    // A root below a workspace symlink: the layer must not be written through it.
    const withLink = expectOk(await call(runner, id, v1, bash('ln -s /tmp packages/link')));
    const cases: [string, Buffer, string][] = [
      ['escape', await makeTarGz([{ name: '../../escaped.txt', body: 'x' }]), 'refused'],
      ['bomb', await makeTarGz([{ name: 'node_modules/zeros.bin', body: Buffer.alloc(40 * 1024 * 1024) }]), 'refused'],
      ['big', await makeTarGz([{ name: 'node_modules/big.bin', body: Buffer.alloc(2_000_000, 'x') }]), 'refused'],
    ];
    for (const [name, body, status] of cases) {
      const key = keyOf(FP_A, `hostile-${name}`);
      await putLayer(key, body);
      const res = expectOk(await call(runner, id, withLink.version, { type: 'environment_restore' }, { key, maxBytes: 1_000_000 }));
      expect((res.result as { layer: { status: string } }).layer.status).toBe(status);
    }
    expect(existsSync(path.join(fx.dir, runner, 'escaped.txt'))).toBe(false);

    const key = keyOf(FP_A, 'hostile-places');
    await putLayer(
      key,
      await makeTarGz([
        { name: 'package.json', body: 'replaced' },
        { name: 'src/evil.js', body: 'not a dependency directory' },
        { name: 'packages/link/node_modules/through-link.js', body: 'x' },
        { name: 'node_modules/ok.js', body: 'ok' },
      ]),
    );
    const res = expectOk(await call(runner, id, withLink.version, { type: 'environment_restore' }, { key }));
    expect(res.result).toMatchObject({ layer: { status: 'restored', roots: ['node_modules'] } });
    expect(bashOutput(await call(runner, id, withLink.version, bash('cat package.json; ls; ls /tmp/node_modules 2>&1 | head -1'), { key }))).toBe(
      "{}node_modules\npackage-lock.json\npackage.json\npackages\nls: cannot access '/tmp/node_modules': No such file or directory\n",
    );
    expect(existsSync(path.join(tree, 'src'))).toBe(false);
  });

  it('restores a layer that compresses past the 100:1 an archive import allows, up to its own byte limit', async () => {
    const id = fx.newWorkspaceId();
    const v1 = await seed(id);
    const key = keyOf(FP_A, 'repetitive');
    // 20 MiB of zeros in ~20 KB: past 100:1 and past the import's 16 MiB floor.
    await putLayer(
      key,
      await makeTarGz([
        { name: 'node_modules/', type: 'directory', mode: 0o755 },
        { name: 'node_modules/zeros.bin', body: Buffer.alloc(20 * 1024 * 1024) },
      ]),
    );
    const res = expectOk(await call('a', id, v1, { type: 'environment_restore' }, { key, maxBytes: 32 * 1024 * 1024 }));
    expect(res.result).toMatchObject({ layer: { status: 'restored', files: 1, bytes: 20 * 1024 * 1024 } });
  });

  it('accepts only keys under a tenant repository folder', async () => {
    const id = fx.newWorkspaceId();
    const v1 = await seed(id);
    for (const key of [`workspaces/${id}/deltas/0000000001.json`, 'environments/../workspaces/x.tar.gz', 'environments/acme/github/octo/app/notahash.tar.gz']) {
      const res = await call('a', id, v1, { type: 'environment_restore' }, { key });
      expect(res.ok).toBe(false);
      if (!res.ok) expect(res.error.kind).toBe('bad_request');
    }
  });
});
