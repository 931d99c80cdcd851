import { PutObjectCommand } from '@aws-sdk/client-s3';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTarGz } from '../../support/archive-fixtures.ts';
import { BUCKET, expectOk, startRunnerFixture, type RunnerFixture } from '../../support/runner-fixture.ts';

/** The archive import's own limits, each at a size small enough to reach in a test, through the runner and the local S3 server. */
describe('archive import guards', () => {
  let fx: RunnerFixture;
  beforeAll(async () => {
    fx = await startRunnerFixture({ archiveLimits: { maxExpansionRatio: 10, expansionFloorBytes: 64 * 1024, maxDepth: 4, maxEntries: 20 } });
  });
  afterAll(async () => {
    await fx?.stop();
  });

  async function importArchive(archive: Buffer) {
    const id = fx.newWorkspaceId();
    const key = `uploads/up-${randomBytes(4).toString('hex')}.tar.gz`;
    await fx.s3Client.send(new PutObjectCommand({ Bucket: BUCKET, Key: `workspaces/${id}/${key}`, Body: archive }));
    return { id, response: await fx.call(id, 0, { type: 'import_archive', key }) };
  }

  it('refuses an archive that expands past its ratio while streaming, naming the limit', async () => {
    const archive = await makeTarGz([{ name: 'zeros.bin', body: Buffer.alloc(4 * 1024 * 1024) }]);
    const { response } = await importArchive(archive);
    expect(response).toEqual({
      ok: false,
      error: {
        kind: 'limit',
        message: `The archive expands to more than ${65_536} bytes from ${archive.length} compressed bytes: an import may expand at most 10 times the archive's size (at least 65536 bytes). Nothing was imported.`,
      },
    });
    // Incompressible data of the same order passes: the ratio, not the size, is the limit.
    expectOk((await importArchive(await makeTarGz([{ name: 'random.bin', body: randomBytes(200_000) }]))).response);
  });

  it('refuses too many entries, too deep a path and an over-long link target before creating them', async () => {
    const dirs = Array.from({ length: 21 }, (_, i) => ({ name: `d${i}/`, type: 'directory' as const }));
    expect((await importArchive(await makeTarGz(dirs))).response).toEqual({
      ok: false,
      error: { kind: 'limit', message: 'The archive holds more than 20 entries (files, directories and links), the import limit.' },
    });
    const deep = await importArchive(await makeTarGz([{ name: 'a/b/c/d/e.txt', body: 'x' }]));
    expect(deep.response).toEqual({
      ok: false,
      error: { kind: 'tool_error', message: 'Archive entry "a/b/c/d/e.txt" is 5 directories deep; at most 4 are allowed.' },
    });
    // Nothing of the refused entry was created, not even the directories above it.
    expect(existsSync(path.join(fx.dir, 'a', 'workspaces', deep.id, 'tree', 'a'))).toBe(false);
    expect((await importArchive(await makeTarGz([{ name: 'link', type: 'symlink', linkname: 't'.repeat(5_000) }]))).response).toEqual({
      ok: false,
      error: { kind: 'tool_error', message: 'Archive entry "link" is a symbolic link whose target is longer than 4095 bytes, the file system\'s limit.' },
    });
    const fine = await importArchive(
      await makeTarGz([
        { name: 'a/b/c/d.txt', body: 'x' },
        { name: 'ok', type: 'symlink', linkname: 'a/b' },
      ]),
    );
    expectOk(fine.response);
    expect(existsSync(path.join(fx.dir, 'a', 'workspaces', fine.id, 'tree', 'a', 'b', 'c', 'd.txt'))).toBe(true);
  });
});
