import { DeleteObjectCommand, GetObjectCommand, ListObjectVersionsCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_S3_CREDENTIALS, startS3Server } from '../../local/s3-server.ts';
import type { EmbeddedServer } from '../../local/dynamo-server.ts';
import { s3ClientConfig } from '../../sandbox-runner/common/s3-client-config.ts';
import { makeTempDir } from '../support/temp-dir.ts';

/** The S3 stand-in's versioned buckets (local/s3-versions.ts), through the real S3 client. */
describe('a versioned bucket on the S3 stand-in', () => {
  const tmp = makeTempDir();
  let server: EmbeddedServer;
  let s3: S3Client;
  beforeAll(async () => {
    server = await startS3Server({ dir: `${tmp.dir}/s3`, buckets: ['v', 'plain'], versionedBuckets: ['v'] });
    // The runner's own client settings (path style, checksums only when required), with the stand-in's key.
    s3 = new S3Client(s3ClientConfig({ region: 'us-east-1', endpoint: server.url }, LOCAL_S3_CREDENTIALS));
  });
  afterAll(async () => {
    s3.destroy();
    await server.close();
    tmp.cleanup();
  });

  const status = (err: unknown) => (err as { $metadata: { httpStatusCode: number } }).$metadata.httpStatusCode;
  const read = async (Key: string, VersionId?: string) => (await s3.send(new GetObjectCommand({ Bucket: 'v', Key, VersionId }))).Body!.transformToString();
  const versions = async (Prefix: string) => {
    const out = await s3.send(new ListObjectVersionsCommand({ Bucket: 'v', Prefix }));
    return [
      ...(out.Versions ?? []).map((v) => ({ key: v.Key, id: v.VersionId, latest: v.IsLatest, marker: false })),
      ...(out.DeleteMarkers ?? []).map((m) => ({ key: m.Key, id: m.VersionId, latest: m.IsLatest, marker: true })),
    ];
  };

  it('keeps what an overwrite and a delete replace, behind a delete marker, each readable by its version id', async () => {
    const first = await s3.send(new PutObjectCommand({ Bucket: 'v', Key: 'a/k', Body: 'one' }));
    const second = await s3.send(new PutObjectCommand({ Bucket: 'v', Key: 'a/k', Body: 'two' }));
    expect(first.VersionId).toBeTruthy();
    expect(second.VersionId).not.toBe(first.VersionId);
    const deleted = await s3.send(new DeleteObjectCommand({ Bucket: 'v', Key: 'a/k' }));
    expect(deleted.DeleteMarker).toBe(true);
    expect(status(await read('a/k').catch((e: unknown) => e))).toBe(404);
    expect(await read('a/k', first.VersionId)).toBe('one');
    expect(await read('a/k', second.VersionId)).toBe('two');
    expect(await versions('a/')).toEqual([
      { key: 'a/k', id: second.VersionId, latest: false, marker: false },
      { key: 'a/k', id: first.VersionId, latest: false, marker: false },
      { key: 'a/k', id: deleted.VersionId, latest: true, marker: true },
    ]);
  });

  it('removes versions and markers for good when deleted by version id, and brings the newest back when the current one goes', async () => {
    const v1 = await s3.send(new PutObjectCommand({ Bucket: 'v', Key: 'b/k', Body: 'one' }));
    const v2 = await s3.send(new PutObjectCommand({ Bucket: 'v', Key: 'b/k', Body: 'two' }));
    await s3.send(new DeleteObjectCommand({ Bucket: 'v', Key: 'b/k', VersionId: v2.VersionId }));
    expect(await read('b/k')).toBe('one');
    expect(await versions('b/')).toEqual([{ key: 'b/k', id: v1.VersionId, latest: true, marker: false }]);
    await s3.send(new DeleteObjectCommand({ Bucket: 'v', Key: 'b/k' }));
    for (const v of await versions('b/')) await s3.send(new DeleteObjectCommand({ Bucket: 'v', Key: v.key, VersionId: v.id }));
    expect(await versions('b/')).toEqual([]);
    expect(status(await read('b/k', v1.VersionId).catch((e: unknown) => e))).toBe(404);
  });

  it('pages ListObjectVersions by key and version markers', async () => {
    for (const body of ['1', '2', '3']) await s3.send(new PutObjectCommand({ Bucket: 'v', Key: 'c/k', Body: body }));
    await s3.send(new PutObjectCommand({ Bucket: 'v', Key: 'c/l', Body: 'x' }));
    const first = await s3.send(new ListObjectVersionsCommand({ Bucket: 'v', Prefix: 'c/', MaxKeys: 2 }));
    expect(first.IsTruncated).toBe(true);
    const rest = await s3.send(
      new ListObjectVersionsCommand({ Bucket: 'v', Prefix: 'c/', KeyMarker: first.NextKeyMarker, VersionIdMarker: first.NextVersionIdMarker }),
    );
    expect([...(first.Versions ?? []), ...(rest.Versions ?? [])].map((v) => v.Key)).toEqual(['c/k', 'c/k', 'c/k', 'c/l']);
    expect(rest.IsTruncated).toBe(false);
  });

  it('answers If-Match on a missing key with 404, as S3 does', async () => {
    const err = await s3.send(new PutObjectCommand({ Bucket: 'plain', Key: 'missing', Body: 'x', IfMatch: '"abc"' })).catch((e: unknown) => e);
    expect(status(err)).toBe(404);
  });
});
