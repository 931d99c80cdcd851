import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { InvokeCommand, LambdaClient, ResourceNotFoundException } from '@aws-sdk/client-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLambdaInvokeServer } from '../../local/lambda-invoke-server.ts';
import { LOCAL_S3_CREDENTIALS, startS3Server } from '../../local/s3-server.ts';
import type { EmbeddedServer } from '../../local/dynamo-server.ts';
import { s3ClientConfig } from '../../sandbox-runner/common/s3-client-config.ts';
import { makeTempDir } from '../support/temp-dir.ts';

describe('the S3 front honours conditional writes', () => {
  const tmp = makeTempDir();
  let server: EmbeddedServer;
  let s3: S3Client;
  beforeAll(async () => {
    server = await startS3Server({ dir: tmp.dir, buckets: ['b'] });
    // The runner's own client settings (path style, checksums only when required), with the stand-in's key.
    s3 = new S3Client(s3ClientConfig({ region: 'us-east-1', endpoint: server.url }, LOCAL_S3_CREDENTIALS));
  });
  afterAll(async () => {
    s3.destroy();
    await server.close();
    tmp.cleanup();
  });

  const status = (err: unknown) => (err as { $metadata: { httpStatusCode: number } }).$metadata.httpStatusCode;
  const read = async (Key: string) => (await s3.send(new GetObjectCommand({ Bucket: 'b', Key }))).Body!.transformToString();

  it('If-None-Match: * creates once, then 412 without overwriting', async () => {
    await s3.send(new PutObjectCommand({ Bucket: 'b', Key: 'k1', Body: 'first', IfNoneMatch: '*' }));
    const err = await s3.send(new PutObjectCommand({ Bucket: 'b', Key: 'k1', Body: 'second', IfNoneMatch: '*' })).catch((e: unknown) => e);
    expect(status(err)).toBe(412);
    expect(await read('k1')).toBe('first');
  });

  it('If-Match succeeds on the current ETag and fails on a stale one', async () => {
    const put = await s3.send(new PutObjectCommand({ Bucket: 'b', Key: 'k2', Body: 'v1' }));
    await s3.send(new PutObjectCommand({ Bucket: 'b', Key: 'k2', Body: 'v2', IfMatch: put.ETag }));
    const err = await s3.send(new PutObjectCommand({ Bucket: 'b', Key: 'k2', Body: 'v3', IfMatch: put.ETag })).catch((e: unknown) => e);
    expect(status(err)).toBe(412);
    expect(await read('k2')).toBe('v2');
  });

  it('lets exactly one of many racing create-only writers win', async () => {
    const outcomes = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) => s3.send(new PutObjectCommand({ Bucket: 'b', Key: 'race', Body: `w${i}`, IfNoneMatch: '*' }))),
    );
    const winners = outcomes.flatMap((o, i) => (o.status === 'fulfilled' ? [i] : []));
    expect(winners).toHaveLength(1);
    expect(await read('race')).toBe(`w${winners[0]}`);
  });
});

describe('the local Lambda Invoke server speaks the protocol the real client expects', () => {
  let server: EmbeddedServer & { pending(): Promise<void> };
  let lambda: LambdaClient;
  const seen: unknown[] = [];
  beforeAll(async () => {
    server = await startLambdaInvokeServer({
      functions: {
        echo: async (event) => ({ echoed: event }),
        boom: async () => {
          throw new TypeError('kaput');
        },
        record: async (event) => {
          seen.push(event);
        },
      },
    });
    lambda = new LambdaClient({ region: 'us-east-1', endpoint: server.url, credentials: { accessKeyId: 'x', secretAccessKey: 'y' } });
  });
  afterAll(async () => {
    lambda.destroy();
    await server.close();
  });

  it('returns the payload for RequestResponse', async () => {
    const out = await lambda.send(new InvokeCommand({ FunctionName: 'echo', Payload: Buffer.from('{"a":1}') }));
    expect(out.StatusCode).toBe(200);
    expect(out.FunctionError).toBeUndefined();
    expect(JSON.parse(Buffer.from(out.Payload!).toString())).toEqual({ echoed: { a: 1 } });
  });

  it('reports handler errors as FunctionError Unhandled', async () => {
    const out = await lambda.send(new InvokeCommand({ FunctionName: 'boom', Payload: Buffer.from('{}') }));
    expect(out.FunctionError).toBe('Unhandled');
    expect(JSON.parse(Buffer.from(out.Payload!).toString())).toMatchObject({ errorType: 'TypeError', errorMessage: 'kaput' });
  });

  it('runs Event invocations in the background with 202', async () => {
    const out = await lambda.send(new InvokeCommand({ FunctionName: 'record', InvocationType: 'Event', Payload: Buffer.from('{"n":7}') }));
    expect(out.StatusCode).toBe(202);
    await server.pending();
    expect(seen).toEqual([{ n: 7 }]);
  });

  it('404s unknown functions as ResourceNotFoundException', async () => {
    const err = await lambda.send(new InvokeCommand({ FunctionName: 'nope', Payload: Buffer.from('{}') })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ResourceNotFoundException);
  });
});
