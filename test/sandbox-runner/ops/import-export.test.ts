import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGitHttpServer } from '../../support/git-http-server.ts';
import { makeTarGz, readTarGz } from '../../support/archive-fixtures.ts';
import { BUCKET, bashOutput, expectOk, startRunnerFixture, type RunnerFixture } from '../../support/runner-fixture.ts';

const bash = (command: string) => ({ type: 'bash' as const, command, timeoutMs: 20_000 });

describe('workspace import and export', () => {
  let fx: RunnerFixture;
  beforeAll(async () => {
    fx = await startRunnerFixture({ git: { allowHttp: true }, workspaceLimits: { maxFiles: 50, maxBytes: 8_000_000, maxFileBytes: 4_000_000 } });
  });
  afterAll(async () => {
    await fx?.stop();
  });

  async function upload(id: string, data: Buffer): Promise<string> {
    const key = `uploads/up-${randomBytes(4).toString('hex')}.tar.gz`;
    await fx.s3Client.send(new PutObjectCommand({ Bucket: BUCKET, Key: `workspaces/${id}/${key}`, Body: data }));
    return key;
  }
  async function download(key: string): Promise<Buffer> {
    const out = await fx.s3Client.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
    return Buffer.from(await out.Body!.transformToByteArray());
  }

  it('imports a tar.gz and exports it back byte for byte (binary, modes, links, nested dirs)', async () => {
    const big = randomBytes(3_000_000);
    const archive = await makeTarGz([
      { name: 'proj/', type: 'directory', mode: 0o755 },
      { name: 'proj/big.bin', body: big, mode: 0o644 },
      { name: 'proj/run.sh', body: '#!/bin/sh\necho run\n', mode: 0o755 },
      { name: 'proj/deep/a/b/c.txt', body: 'deep\n', mode: 0o600 },
      { name: 'proj/link', type: 'symlink', linkname: 'run.sh' },
      { name: 'proj/hard.sh', type: 'link', linkname: 'proj/run.sh', mode: 0o755 },
    ]);
    const id = fx.newWorkspaceId();
    const imported = expectOk(await fx.call(id, 0, { type: 'import_archive', key: await upload(id, archive) }));
    expect(imported.result).toEqual({ type: 'import_archive', files: 4, bytes: 3_000_000 + 19 + 5 + 19, skipped: 0 });
    expect(imported.version).toBe(1);

    // Another container starts cold from the snapshot the import wrote.
    expect(bashOutput(await fx.call(id, 1, bash('cd proj && ./run.sh && readlink link && stat -c "%a %n" run.sh deep/a/b/c.txt'), { runner: 'cold' }))).toBe(
      'run\nrun.sh\n755 run.sh\n600 deep/a/b/c.txt\n',
    );

    const listed = expectOk(await fx.call(id, 1, { type: 'list_files' }));
    expect(listed.result).toEqual({
      type: 'list_files',
      files: [
        { path: 'proj', type: 'dir', mode: 0o755 },
        { path: 'proj/big.bin', type: 'file', size: 3_000_000, mode: 0o644 },
        { path: 'proj/deep', type: 'dir', mode: 0o755 },
        { path: 'proj/deep/a', type: 'dir', mode: 0o755 },
        { path: 'proj/deep/a/b', type: 'dir', mode: 0o755 },
        { path: 'proj/deep/a/b/c.txt', type: 'file', size: 5, mode: 0o600 },
        { path: 'proj/hard.sh', type: 'file', size: 19, mode: 0o755 },
        { path: 'proj/link', type: 'symlink', target: 'run.sh' },
        { path: 'proj/run.sh', type: 'file', size: 19, mode: 0o755 },
      ],
    });

    const one = expectOk(await fx.call(id, 1, { type: 'export_file', path: '/workspace/proj/big.bin' }));
    if (one.result.type !== 'export_file') throw new Error('wrong result');
    expect((await download(one.result.key)).equals(big)).toBe(true);

    const whole = expectOk(await fx.call(id, 1, { type: 'export_archive' }));
    if (whole.result.type !== 'export_archive') throw new Error('wrong result');
    const entries = await readTarGz(await download(whole.result.key));
    expect(entries.map((e) => [e.name, e.type, e.mode.toString(8), e.linkname ?? ''])).toEqual([
      ['proj', 'directory', '755', ''],
      ['proj/big.bin', 'file', '644', ''],
      ['proj/deep', 'directory', '755', ''],
      ['proj/deep/a', 'directory', '755', ''],
      ['proj/deep/a/b', 'directory', '755', ''],
      ['proj/deep/a/b/c.txt', 'file', '600', ''],
      ['proj/hard.sh', 'file', '755', ''],
      ['proj/link', 'symlink', '777', 'run.sh'],
      ['proj/run.sh', 'file', '755', ''],
    ]);
    expect(entries[1]!.body.equals(big)).toBe(true);
  });

  it('refuses archives whose entries escape the workspace or write through a link', async () => {
    const cases: [Parameters<typeof makeTarGz>[0], string][] = [
      [[{ name: '../evil.txt', body: 'x' }], 'Archive entry "../evil.txt" points outside the workspace.'],
      [[{ name: '/etc/evil', body: 'x' }], 'Archive entry "/etc/evil" points outside the workspace.'],
      [
        [
          { name: 'out', type: 'symlink', linkname: '/tmp' },
          { name: 'out/evil.txt', body: 'x' },
        ],
        'Archive entry "out/evil.txt" goes through "out", which is a symbolic link.',
      ],
      [[{ name: 'h', type: 'link', linkname: '/etc/passwd' }], 'Archive entry "/etc/passwd" points outside the workspace.'],
      [[{ name: 'h', type: 'link', linkname: 'missing.txt' }], 'Archive entry "h" is a hard link to "missing.txt", which is not a file in the archive.'],
    ];
    for (const [entries, message] of cases) {
      const id = fx.newWorkspaceId();
      const response = await fx.call(id, 0, { type: 'import_archive', key: await upload(id, await makeTarGz(entries)) });
      expect(response).toEqual({ ok: false, error: { kind: 'tool_error', message } });
    }
    const id = fx.newWorkspaceId();
    const garbage = await fx.call(id, 0, { type: 'import_archive', key: await upload(id, Buffer.from('not an archive')) });
    expect(garbage).toEqual({
      ok: false,
      error: { kind: 'tool_error', message: "The upload is not a gzip'd tar archive (incorrect header check); send a .tar.gz file." },
    });
  });

  it('enforces file count, single file size and total size with clear errors', async () => {
    const many = Array.from({ length: 51 }, (_, i) => ({ name: `f${i}.txt`, body: 'x' }));
    const id1 = fx.newWorkspaceId();
    expect(await fx.call(id1, 0, { type: 'import_archive', key: await upload(id1, await makeTarGz(many)) })).toEqual({
      ok: false,
      error: { kind: 'limit', message: 'The archive holds more than 50 files, the workspace limit.' },
    });
    const id2 = fx.newWorkspaceId();
    expect(
      await fx.call(id2, 0, { type: 'import_archive', key: await upload(id2, await makeTarGz([{ name: 'huge.bin', body: Buffer.alloc(4_000_001) }])) }),
    ).toEqual({
      ok: false,
      error: { kind: 'limit', message: "The archive's file huge.bin is 4000001 bytes, more than the single-file limit of 4000000." },
    });
    // A command that grows the workspace past a limit: nothing is saved, the version stays.
    const id3 = fx.newWorkspaceId();
    expectOk(await fx.call(id3, 0, { type: 'create_workspace', files: { 'a.txt': 'a' } }));
    expect(await fx.call(id3, 1, bash('for i in 1 2 3; do head -c 3000000 /dev/zero > big$i; done'))).toEqual({
      ok: false,
      error: { kind: 'limit', message: 'The workspace would hold 9000001 bytes, more than the limit of 8000000. Remove files and retry; nothing was saved.' },
    });
    expect(bashOutput(await fx.call(id3, 1, bash('ls')))).toBe('a.txt\n');
  });

  it('clones a git repository over smart HTTP, shallow by default, with a token that is never stored', async () => {
    const root = path.join(fx.dir, 'git');
    const work = path.join(root, 'work');
    mkdirSync(work, { recursive: true });
    const git = (...args: string[]) => execFileSync('git', ['-C', work, '-c', 'user.name=t', '-c', 'user.email=t@e', ...args], { encoding: 'utf8' });
    git('init', '-q', '-b', 'main');
    writeFileSync(path.join(work, 'README.md'), 'one\n');
    git('add', '.');
    git('commit', '-qm', 'first');
    writeFileSync(path.join(work, 'README.md'), 'two\n');
    git('commit', '-qam', 'second');
    execFileSync('git', ['clone', '-q', '--bare', work, path.join(root, 'repo.git')]);
    const server = await startGitHttpServer({ projectRoot: root, token: 'tok-123' });
    try {
      const id = fx.newWorkspaceId();
      const cloned = expectOk(await fx.call(id, 0, { type: 'import_git', url: `${server.url}/repo.git`, token: 'tok-123' }));
      expect(cloned.result).toEqual({ type: 'import_git', url: `${server.url}/repo.git`, depth: 1 });
      expect(
        bashOutput(await fx.call(id, 1, bash('cat README.md; git rev-list --count HEAD; git log --format=%s; grep -rc tok-123 .git | grep -v ":0" | wc -l'))),
      ).toBe('two\n1\nsecond\n0\n');

      // Clones go through the allow-list proxy too: a name that resolves to a loopback address is refused there.
      const before = server.requests.length;
      const byName = await fx.call(fx.newWorkspaceId(), 0, {
        type: 'import_git',
        url: `${server.url.replace('127.0.0.1', 'localhost')}/repo.git`,
        token: 'tok-123',
      });
      expect(byName).toEqual({
        ok: false,
        error: {
          kind: 'tool_error',
          message:
            'git clone failed: remote: Blocked by the sandbox: localhost resolves to 127.0.0.1, a loopback address; name 127.0.0.1 itself to reach it.\n' +
            `fatal: unable to access '${server.url.replace('127.0.0.1', 'localhost')}/repo.git/': The requested URL returned error: 403`,
        },
      });
      expect(server.requests.length).toBe(before);

      const denied = await fx.call(fx.newWorkspaceId(), 0, { type: 'import_git', url: `${server.url}/repo.git`, token: 'wrong' });
      expect(denied).toEqual({
        ok: false,
        error: { kind: 'tool_error', message: `git clone failed: fatal: could not read Username for '${server.url}': terminal prompts disabled` },
      });
    } finally {
      await server.close();
    }
    expect(await fx.call(fx.newWorkspaceId(), 0, { type: 'import_git', url: 'file:///etc' })).toEqual({
      ok: false,
      error: { kind: 'tool_error', message: 'Only https:// and http:// git URLs are allowed, not file://.' },
    });
  });
});
