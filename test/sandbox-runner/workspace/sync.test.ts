import { ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUCKET, bashOutput, expectOk, startRunnerFixture, type RunnerFixture } from '../../support/runner-fixture.ts';

const bash = (command: string) => ({ type: 'bash' as const, command, timeoutMs: 20_000 });

describe('workspace sync through S3', () => {
  let fx: RunnerFixture;
  beforeAll(async () => {
    // Snapshots every 8 versions here (64 by default) so the cadence test stays short.
    fx = await startRunnerFixture({ snapshots: { everyVersions: 8, everyEntries: 4_000 } });
  });
  afterAll(async () => {
    await fx?.stop();
  });

  async function seeded(files: Record<string, string | { base64: string }>) {
    const id = fx.newWorkspaceId();
    const created = expectOk(await fx.call(id, 0, { type: 'create_workspace', files }));
    expect(created.version).toBe(1);
    return id;
  }

  it('serves a call at the version it already holds without touching S3, and a no-change command uploads nothing', async () => {
    const id = await seeded({ 'a.txt': 'alpha\n', 'src/b.txt': 'beta\n' });
    const before = fx.s3.traffic().requests;
    const read = expectOk(await fx.call(id, 1, { type: 'read', path: '/workspace/a.txt' }));
    expect(read.sync).toEqual({ mode: 'warm', changedPaths: 0 });
    const noop = expectOk(await fx.call(id, 1, bash('cat src/b.txt; ls >/dev/null')));
    expect(noop.result).toMatchObject({ type: 'bash', output: 'beta\n', exitCode: 0 });
    expect(noop.version).toBe(1);
    expect(noop.bytesUploaded).toBe(0);
    expect(fx.s3.traffic().requests - before).toBe(0);
  });

  it('rebuilds a workspace cold in another container byte for byte: binary, modes, symlinks, deletes', async () => {
    const binary = randomBytes(300_000);
    const id = await seeded({ 'bin/data.bin': { base64: binary.toString('base64') }, 'keep.txt': 'keep\n', 'gone/x.txt': 'x', 'old.txt': 'o' });
    const changed = expectOk(
      await fx.call(
        id,
        1,
        bash('chmod 755 keep.txt && rm -r gone old.txt && ln -s keep.txt link && ln -s /etc/passwd escape && mkdir -p empty && chmod 700 empty'),
      ),
    );
    expect(changed.version).toBe(2);
    const cold = expectOk(
      await fx.call(id, 2, bash('stat -c "%a %F %n" keep.txt empty; readlink link escape; ls; sha256sum bin/data.bin'), { runner: 'fresh' }),
    );
    expect(cold.sync.mode).toBe('cold');
    const sha = (await import('node:crypto')).createHash('sha256').update(binary).digest('hex');
    expect(bashOutput(cold)).toBe(
      `755 regular file keep.txt\n700 directory empty\nkeep.txt\n/etc/passwd\nbin\nempty\nescape\nkeep.txt\nlink\n${sha}  bin/data.bin\n`,
    );
    // The link pointing out is kept as a link, never followed: Read refuses it.
    const refused = await fx.call(id, 2, { type: 'read', path: '/workspace/escape' }, { runner: 'fresh' });
    expect(refused).toEqual({ ok: false, error: { kind: 'tool_error', message: 'File does not exist. Note: your current working directory is /workspace.' } });
  });

  it('uploads only the edited file and a small delta, whatever the workspace size', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 300; i++) files[`pkg/f${i}.txt`] = `file ${i}\n`.repeat(50);
    const id = await seeded(files);
    const edit = expectOk(await fx.call(id, 1, bash('printf "new body\\n" > pkg/f7.txt')));
    expect(edit.version).toBe(2);
    expect(edit.changedFiles).toBe(1);
    // 9 bytes of content plus a delta of a few hundred bytes; the 300-file manifest is not resent.
    expect(edit.bytesUploaded).toBeGreaterThan(9);
    expect(edit.bytesUploaded).toBeLessThan(600);
  });

  it('publishes a small edit in one request, its body inside the delta, and a large file as a blob; both reach other copies', async () => {
    const id = await seeded({ 'a.txt': 'one\n' });
    expectOk(await fx.call(id, 1, bash('true'), { runner: 'inline-warm' }));
    const before = fx.s3.traffic();
    const small = expectOk(await fx.call(id, 1, bash('echo small edit > a.txt'), { runner: 'inline-writer' }));
    const afterSmall = fx.s3.traffic();
    // The delta alone: no blob PUT (and no HEAD before one).
    expect(afterSmall.byMethod.PUT! - (before.byMethod.PUT ?? 0)).toBe(1);
    expect(afterSmall.byMethod.HEAD ?? 0).toBe(before.byMethod.HEAD ?? 0);
    const listed = await fx.s3Client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: `workspaces/${id}/blobs/` }));
    expect(listed.KeyCount ?? 0).toBe(0);
    const large = expectOk(await fx.call(id, small.version, bash('head -c 40000 /dev/zero | tr "\\0" x > big.txt'), { runner: 'inline-writer' }));
    const blobs = await fx.s3Client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: `workspaces/${id}/blobs/` }));
    expect(blobs.KeyCount).toBe(1);
    const caught = expectOk(await fx.call(id, large.version, bash('cat a.txt; wc -c < big.txt'), { runner: 'inline-warm' }));
    expect(caught.sync).toEqual({ mode: 'incremental', changedPaths: 2 });
    expect(bashOutput(caught)).toBe('small edit\n40000\n');
    expect(bashOutput(await fx.call(id, large.version, bash('cat a.txt; wc -c < big.txt'), { runner: 'inline-cold' }))).toBe('small edit\n40000\n');
  });

  it('brings a warm copy forward by deltas when another container published newer versions', async () => {
    const id = await seeded({ 'a.txt': 'one\n', 'b.txt': 'bee\n' });
    expectOk(await fx.call(id, 1, bash('true'), { runner: 'b' }));
    expectOk(await fx.call(id, 1, bash('echo two > a.txt'), { runner: 'c' }));
    expectOk(await fx.call(id, 2, bash('rm b.txt; echo new > c.txt'), { runner: 'c' }));
    const caught = expectOk(await fx.call(id, 3, bash('cat a.txt c.txt; ls'), { runner: 'b' }));
    expect(caught.sync).toEqual({ mode: 'incremental', changedPaths: 3 });
    expect(bashOutput(caught)).toBe('two\nnew\na.txt\nc.txt\n');
  });

  it('refuses a change based on a stale version with a conflict instead of overwriting', async () => {
    const id = await seeded({ 'a.txt': 'base\n' });
    expectOk(await fx.call(id, 1, bash('echo first > a.txt'), { runner: 'p' }));
    const second = await fx.call(id, 1, bash('echo second > a.txt'), { runner: 'q' });
    expect(second).toEqual({
      ok: false,
      error: {
        kind: 'conflict',
        message: `Your change was not saved: workspace ${id} changed concurrently and is now at version 2. Re-read the files you need and retry.`,
        latestVersion: 2,
      },
    });
    // The loser's copy is not trusted afterwards: at version 2 it shows the winner's content.
    expect(bashOutput(await fx.call(id, 2, bash('cat a.txt'), { runner: 'q' }))).toBe('first\n');
  });

  it('detects a same-size rewrite by mtime and a mode-only change', async () => {
    const id = await seeded({ 'same.txt': 'aaaa\n', 'run.sh': 'echo hi\n' });
    const rewrite = expectOk(await fx.call(id, 1, bash('sleep 0.01; printf "bbbb\\n" > same.txt; chmod +x run.sh')));
    expect(rewrite.changedFiles).toBe(2);
    expect(bashOutput(await fx.call(id, 2, bash('cat same.txt; stat -c %a run.sh'), { runner: 'cold2' }))).toBe('bbbb\n755\n');
  });

  it('never keeps a setuid or setgid bit, on disk or in the history', async () => {
    const id = await seeded({ tool: '#!/bin/sh\n' });
    const changed = expectOk(await fx.call(id, 1, bash('chmod 6755 tool; mkdir d; chmod 2775 d')));
    expect(changed.version).toBe(2);
    expect(bashOutput(await fx.call(id, 2, bash('stat -c "%a %n" tool d')))).toBe('755 tool\n775 d\n');
    expect(bashOutput(await fx.call(id, 2, bash('stat -c "%a %n" tool d'), { runner: 'suid-cold' }))).toBe('755 tool\n775 d\n');
  });

  it('follows a file becoming a directory and back when catching up by deltas', async () => {
    const id = await seeded({ a: 'file a\n', 'd/inner.txt': 'inner\n' });
    expectOk(await fx.call(id, 1, bash('true'), { runner: 'x' }));
    expectOk(await fx.call(id, 1, bash('rm a && mkdir a && echo in > a/f && rm -r d && echo file > d'), { runner: 'y' }));
    const caught = expectOk(await fx.call(id, 2, bash('cat a/f d; find . | sort'), { runner: 'x' }));
    expect(caught.sync.mode).toBe('incremental');
    expect(bashOutput(caught)).toBe('in\nfile\n.\n./a\n./a/f\n./d\n');
  });

  it('writes a fresh snapshot every N versions, so a cold start stays at 4 requests', async () => {
    const id = await seeded({ 'log.txt': '' });
    let version = 1;
    for (let i = 0; i < 8; i++) version = expectOk(await fx.call(id, version, bash(`echo ${i} >> log.txt`))).version;
    expect(version).toBe(9);
    const listed = await fx.s3Client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: `workspaces/${id}/snapshots/` }));
    expect(
      (listed.Contents ?? []).map((o) =>
        o
          .Key!.replace(/\.[0-9a-f]{16}\./, '.N.')
          .split('/')
          .pop(),
      ),
    ).toEqual(['0000000001.N.json', '0000000001.N.pack', '0000000009.N.json', '0000000009.N.pack']);
    const before = fx.s3.traffic().requests;
    const cold = expectOk(await fx.call(id, 9, bash('wc -l < log.txt; tail -1 log.txt'), { runner: 'cold9' }));
    expect(cold.sync.mode).toBe('cold');
    expect(fx.s3.traffic().requests - before).toBe(4);
    expect(bashOutput(cold)).toBe('8\n7\n');
  });

  it('snapshots a small workspace once a command rewrote a good part of it, so a cold start is not a GET per file', async () => {
    const id = await seeded({ 'README.md': 'x\n' });
    const wrote = expectOk(await fx.call(id, 1, bash('mkdir gen && for i in $(seq 1 300); do echo "$i $(printf %0300d 0)" > gen/f$i.txt; done')));
    expect(wrote.version).toBe(2);
    const before = fx.s3.traffic().requests;
    const cold = expectOk(await fx.call(id, 2, bash('cat gen/f300.txt | cut -c1-4; ls gen | wc -l'), { runner: 'cold-generated' }));
    expect(cold.sync.mode).toBe('cold');
    expect(bashOutput(cold)).toBe('300 \n300\n');
    expect(fx.s3.traffic().requests - before).toBe(4);
  });

  it('ignores the snapshot of a writer that lost the race for a version', async () => {
    const id = fx.newWorkspaceId();
    expectOk(await fx.call(id, 0, { type: 'create_workspace', files: { 'who.txt': 'winner\n' } }, { runner: 'w1' }));
    // The loser writes its snapshot for version 1 before it fails to claim version 1.
    const lost = await fx.call(id, 0, { type: 'create_workspace', files: { 'who.txt': 'loser!\n' } }, { runner: 'w2' });
    expect(lost).toMatchObject({ ok: false, error: { kind: 'conflict', latestVersion: 1 } });
    const snapshots = await fx.s3Client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: `workspaces/${id}/snapshots/` }));
    expect(snapshots.Contents?.filter((o) => o.Key!.endsWith('.json'))).toHaveLength(2);
    expect(bashOutput(await fx.call(id, 1, bash('cat who.txt'), { runner: 'w3' }))).toBe('winner\n');
  });

  it('refuses a crafted version that would write through a link or outside the tree', async () => {
    const id = await seeded({ 'a.txt': 'a\n' });
    const crafted = {
      version: 2,
      createdAt: new Date().toISOString(),
      upserts: { out: { type: 'symlink', target: '/etc' }, 'out/passwd': { type: 'file', sha256: '0'.repeat(64), size: 1, mode: 0o644 } },
      deletes: [],
    };
    await fx.s3Client.send(new PutObjectCommand({ Bucket: BUCKET, Key: `workspaces/${id}/deltas/0000000002.json`, Body: JSON.stringify(crafted) }));
    expect(await fx.call(id, 2, bash('true'), { runner: 'victim' })).toEqual({
      ok: false,
      error: {
        kind: 'bad_request',
        message: `Workspace ${id} version 2 is malformed: "out/passwd" lies under "out", which is not a directory of this version.`,
      },
    });
  });
});
