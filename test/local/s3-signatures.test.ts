import { GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { createPresignedPost } from '@aws-sdk/s3-presigned-post';
import { HttpRequest } from '@smithy/protocol-http';
import { SignatureV4 } from '@smithy/signature-v4';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_S3_CREDENTIALS, startS3Server } from '../../local/s3-server.ts';
import type { EmbeddedServer } from '../../local/service-child.ts';
import { Sha256 } from '../support/sdk-sha256.ts';
import { makeTempDir } from '../support/temp-dir.ts';

const error = (xml: string) => /<Code>([^<]+)<\/Code><Message>([^<]*)<\/Message>/.exec(xml)?.slice(1);

describe('the S3 stand-in refuses what is not signed with the local credentials', () => {
  const tmp = makeTempDir();
  let server: EmbeddedServer;
  let s3: S3Client;
  const client = (credentials: { accessKeyId: string; secretAccessKey: string }) =>
    new S3Client({
      region: 'us-east-1',
      endpoint: server.url,
      forcePathStyle: true,
      credentials,
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  const exists = (Key: string) =>
    s3.send(new HeadObjectCommand({ Bucket: 'b', Key })).then(
      () => true,
      () => false,
    );
  /** A presigned URL made by the SDK's own signer. */
  const presign = async (method: string, key: string, opts: { expiresIn?: number; signingDate?: Date } = {}) => {
    const signer = new SignatureV4({
      credentials: LOCAL_S3_CREDENTIALS,
      region: 'us-east-1',
      service: 's3',
      sha256: Sha256,
      uriEscapePath: false,
      applyChecksum: false,
    });
    const url = new URL(server.url);
    // As @aws-sdk/s3-request-presigner does: the payload is unsigned, and the header is hoisted into the query.
    const headers = { host: url.host, 'X-Amz-Content-Sha256': 'UNSIGNED-PAYLOAD' };
    const request = new HttpRequest({ method, protocol: 'http:', hostname: url.hostname, port: Number(url.port), path: `/b/${key}`, headers });
    const signed = await signer.presign(request, { expiresIn: opts.expiresIn ?? 300, signingDate: opts.signingDate });
    const query = Object.entries(signed.query ?? {})
      .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`)
      .join('&');
    return `${server.url}${signed.path}?${query}`;
  };
  beforeAll(async () => {
    server = await startS3Server({ dir: tmp.dir, buckets: ['b'] });
    s3 = client(LOCAL_S3_CREDENTIALS);
    await s3.send(new PutObjectCommand({ Bucket: 'b', Key: 'private/secret.txt', Body: 'secret' }));
  });
  afterAll(async () => {
    s3.destroy();
    await server.close();
    tmp.cleanup();
  });

  it('serves the SDK signed with the local key, keys with spaces and symbols and paginated listings included', async () => {
    const key = 'dir/a b+c%d=é (1).txt';
    await s3.send(new PutObjectCommand({ Bucket: 'b', Key: key, Body: 'odd name' }));
    expect(await (await s3.send(new GetObjectCommand({ Bucket: 'b', Key: key }))).Body!.transformToString()).toBe('odd name');
    await s3.send(new PutObjectCommand({ Bucket: 'b', Key: 'dir/second', Body: '2' }));
    const first = await s3.send(new ListObjectsV2Command({ Bucket: 'b', Prefix: 'dir/', MaxKeys: 1 }));
    const next = await s3.send(new ListObjectsV2Command({ Bucket: 'b', Prefix: 'dir/', MaxKeys: 1, ContinuationToken: first.NextContinuationToken }));
    expect([...first.Contents!, ...next.Contents!].map((o) => o.Key)).toEqual([key, 'dir/second']);
  });

  it('refuses unsigned reads, listings and writes with 403 AccessDenied, storing nothing', async () => {
    const get = await fetch(`${server.url}/b/private/secret.txt`);
    expect([get.status, error(await get.text())]).toEqual([403, ['AccessDenied', 'Access Denied']]);
    const list = await fetch(`${server.url}/b?list-type=2&prefix=private/`);
    expect([list.status, error(await list.text())]).toEqual([403, ['AccessDenied', 'Access Denied']]);
    const put = await fetch(`${server.url}/b/private/planted`, { method: 'PUT', body: 'pwned' });
    expect([put.status, error(await put.text())]).toEqual([403, ['AccessDenied', 'Access Denied']]);
    expect(await exists('private/planted')).toBe(false);
    const head = await fetch(`${server.url}/b/private/secret.txt`, { method: 'HEAD' });
    expect(head.status).toBe(403);
  });

  it('refuses a request signed with another secret or key id, and a signature made for another request', async () => {
    const wrongSecret = client({ accessKeyId: LOCAL_S3_CREDENTIALS.accessKeyId, secretAccessKey: 'guessed' });
    const refused = await wrongSecret.send(new PutObjectCommand({ Bucket: 'b', Key: 'private/planted', Body: 'pwned' })).then(
      () => undefined,
      (e: { name: string; $metadata: { httpStatusCode: number } }) => e,
    );
    expect([refused?.$metadata.httpStatusCode, refused?.name]).toEqual([403, 'SignatureDoesNotMatch']);
    const wrongKey = client({ accessKeyId: 'AKIDOTHER', secretAccessKey: LOCAL_S3_CREDENTIALS.secretAccessKey });
    const unknown = await wrongKey.send(new GetObjectCommand({ Bucket: 'b', Key: 'private/secret.txt' })).then(
      () => undefined,
      (e: { name: string }) => e,
    );
    expect(unknown?.name).toBe('InvalidAccessKeyId');
    expect(await exists('private/planted')).toBe(false);
    // A valid signature for one object does not open another.
    const other = (await presign('GET', 'private/secret.txt')).replace('/b/private/secret.txt', '/b/dir/second');
    const moved = await fetch(other);
    expect([moved.status, error(await moved.text())?.[0]]).toEqual([403, 'SignatureDoesNotMatch']);
    const forged = await fetch(`${server.url}/b/private/secret.txt`, {
      headers: {
        authorization: `AWS4-HMAC-SHA256 Credential=S3RVER/20261201/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=${'0'.repeat(64)}`,
        'x-amz-date': '20261201T000000Z',
        'x-amz-content-sha256': 'UNSIGNED-PAYLOAD',
      },
    });
    expect(forged.status).toBe(403);
  });

  it('accepts presigned GET and PUT URLs until they expire', async () => {
    const get = await fetch(await presign('GET', 'private/secret.txt'));
    expect([get.status, await get.text()]).toEqual([200, 'secret']);
    const put = await fetch(await presign('PUT', 'uploads/by-url'), { method: 'PUT', body: 'via url' });
    expect(put.status).toBe(200);
    expect(await (await s3.send(new GetObjectCommand({ Bucket: 'b', Key: 'uploads/by-url' }))).Body!.transformToString()).toBe('via url');
    const expired = await fetch(await presign('GET', 'private/secret.txt', { expiresIn: 60, signingDate: new Date(Date.now() - 120_000) }));
    expect([expired.status, error(await expired.text())]).toEqual([403, ['AccessDenied', 'Request has expired']]);
  });

  describe('POST forms: the policy is signed and its conditions hold', () => {
    const post = (
      form: { url: string; fields: Record<string, string> },
      file: string,
      edit: (f: Record<string, string>) => Record<string, string> = (f) => f,
    ) => {
      const body = new FormData();
      for (const [name, value] of Object.entries(edit({ ...form.fields }))) body.append(name, value);
      body.append('file', new Blob([file]));
      return fetch(form.url, { method: 'POST', body });
    };
    const tagging = '<Tagging><TagSet><Tag><Key>t</Key><Value>1</Value></Tag></TagSet></Tagging>';
    const presignedPost = (Key: string, Expires = 300) =>
      createPresignedPost(s3, {
        Bucket: 'b',
        Key,
        Conditions: [
          ['content-length-range', 1, 16],
          ['eq', '$tagging', tagging],
        ],
        Fields: { tagging },
        Expires,
      });

    it('stores a form within its policy, a file of exactly the largest size included', async () => {
      const res = await post(await presignedPost('forms/ok'), 'sixteen bytes!!!');
      expect(res.status).toBe(204);
      expect(await (await s3.send(new GetObjectCommand({ Bucket: 'b', Key: 'forms/ok' }))).Body!.transformToString()).toBe('sixteen bytes!!!');
    });

    it('refuses an unsigned form, a forged or altered policy, a changed field, an extra field, a file over the range and an expired policy', async () => {
      const form = await presignedPost('forms/guarded');
      const cases: [string, Response, [number, string, string?]][] = [
        ['unsigned', await post({ url: form.url, fields: { key: 'forms/guarded' } }, 'x'), [403, 'AccessDenied']],
        ['forged', await post(form, 'x', (f) => ({ ...f, 'X-Amz-Signature': '0'.repeat(64) })), [403, 'SignatureDoesNotMatch']],
        [
          'altered policy',
          await post(form, 'x', (f) => ({ ...f, Policy: Buffer.from(Buffer.from(f.Policy!, 'base64').toString().replace('16', '99999')).toString('base64') })),
          [403, 'SignatureDoesNotMatch'],
        ],
        [
          'other key',
          await post(form, 'x', (f) => ({ ...f, key: 'private/secret.txt' })),
          [403, 'AccessDenied', 'Invalid according to Policy: Policy Condition failed: {"key":"forms/guarded"}'],
        ],
        [
          'extra field',
          await post(form, 'x', (f) => ({ ...f, 'x-amz-meta-owner': 'me' })),
          [403, 'AccessDenied', 'Invalid according to Policy: Extra input fields: x-amz-meta-owner'],
        ],
        [
          'too large',
          await post(form, 'x'.repeat(17)),
          [403, 'AccessDenied', 'Invalid according to Policy: Your proposed upload exceeds the maximum allowed size'],
        ],
      ];
      const expiring = await presignedPost('forms/late', 1);
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      cases.push(['expired', await post(expiring, 'x'), [403, 'AccessDenied', 'Invalid according to Policy: Policy expired.']]);
      for (const [name, res, [status, code, message]] of cases) {
        const [gotCode, gotMessage] = error(await res.text()) ?? [];
        expect([name, res.status, gotCode, ...(message ? [gotMessage] : [])]).toEqual([name, status, code, ...(message ? [message] : [])]);
      }
      expect(await exists('forms/guarded')).toBe(false);
      expect(await exists('forms/late')).toBe(false);
      expect(await (await s3.send(new GetObjectCommand({ Bucket: 'b', Key: 'private/secret.txt' }))).Body!.transformToString()).toBe('secret');
    });
  });
});
