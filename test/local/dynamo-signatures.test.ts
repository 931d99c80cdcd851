import { CreateTableCommand, DynamoDBClient, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { HttpRequest } from '@smithy/protocol-http';
import { SignatureV4 } from '@smithy/signature-v4';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDynamoServer, type EmbeddedServer } from '../../local/dynamo-server.ts';
import { LOCAL_S3_CREDENTIALS } from '../../local/s3-server.ts';
import { Sha256 } from '../support/sdk-sha256.ts';
import { makeTempDir } from '../support/temp-dir.ts';

describe('the DynamoDB stand-in refuses calls not signed with the local credentials', () => {
  const tmp = makeTempDir();
  let server: EmbeddedServer;
  const client = (credentials: { accessKeyId: string; secretAccessKey: string }) =>
    new DynamoDBClient({ region: 'us-east-1', endpoint: server.url, credentials, maxAttempts: 1 });
  const call = (target: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': `DynamoDB_20120810.${target}`, ...headers },
      body: JSON.stringify(body),
    });
  const errorType = async (res: Response) => [res.status, ((await res.json()) as { __type: string }).__type.split('#')[1]];
  beforeAll(async () => {
    server = await startDynamoServer({ dir: tmp.dir });
    const db = client(LOCAL_S3_CREDENTIALS);
    await db.send(
      new CreateTableCommand({
        TableName: 'secrets',
        AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
        KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
        BillingMode: 'PAY_PER_REQUEST',
      }),
    );
    await db.send(new PutItemCommand({ TableName: 'secrets', Item: { id: { S: 'a' }, secret: { S: 'launch code' } } }));
    db.destroy();
  });
  afterAll(async () => {
    await server.close();
    tmp.cleanup();
  });

  it('serves the SDK signed with the local key', async () => {
    const db = client(LOCAL_S3_CREDENTIALS);
    expect((await db.send(new GetItemCommand({ TableName: 'secrets', Key: { id: { S: 'a' } } }))).Item?.secret).toEqual({ S: 'launch code' });
    db.destroy();
  });

  it('refuses an unsigned call, a made-up signature, another secret or key id, and a signed call whose body was changed', async () => {
    expect(await errorType(await call('Scan', { TableName: 'secrets' }))).toEqual([400, 'MissingAuthenticationTokenException']);
    const now = new Date().toISOString().replace(/[-:]|\.\d{3}/g, '');
    const madeUp = {
      authorization: `AWS4-HMAC-SHA256 Credential=S3RVER/${now.slice(0, 8)}/us-east-1/dynamodb/aws4_request, SignedHeaders=host;x-amz-date, Signature=${'0'.repeat(64)}`,
      'x-amz-date': now,
    };
    expect(await errorType(await call('Scan', { TableName: 'secrets' }, madeUp))).toEqual([400, 'InvalidSignatureException']);
    for (const [credentials, type] of [
      [{ accessKeyId: LOCAL_S3_CREDENTIALS.accessKeyId, secretAccessKey: 'guessed' }, 'InvalidSignatureException'],
      [{ accessKeyId: 'AKIDOTHER', secretAccessKey: LOCAL_S3_CREDENTIALS.secretAccessKey }, 'UnrecognizedClientException'],
    ] as const) {
      const db = client(credentials);
      const err = await db.send(new GetItemCommand({ TableName: 'secrets', Key: { id: { S: 'a' } } })).then(
        () => undefined,
        (e: { name: string }) => e,
      );
      expect(err?.name).toBe(type);
      db.destroy();
    }
    // A correctly signed DescribeTable, sent with a Scan's body instead.
    const url = new URL(server.url);
    const signer = new SignatureV4({ credentials: LOCAL_S3_CREDENTIALS, region: 'us-east-1', service: 'dynamodb', sha256: Sha256 });
    const headers = { host: url.host, 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'DynamoDB_20120810.DescribeTable' };
    const signed = await signer.sign(
      new HttpRequest({
        method: 'POST',
        protocol: 'http:',
        hostname: url.hostname,
        port: Number(url.port),
        path: '/',
        headers,
        body: JSON.stringify({ TableName: 'secrets' }),
      }),
    );
    const valid = await fetch(server.url, { method: 'POST', headers: signed.headers, body: signed.body as string });
    expect(valid.status).toBe(200);
    const swapped = await fetch(server.url, {
      method: 'POST',
      headers: { ...signed.headers, 'x-amz-target': 'DynamoDB_20120810.Scan' },
      body: signed.body as string,
    });
    expect(await errorType(swapped)).toEqual([400, 'InvalidSignatureException']);
    const rebodied = await fetch(server.url, { method: 'POST', headers: signed.headers, body: JSON.stringify({ TableName: 'other' }) });
    expect(await errorType(rebodied)).toEqual([400, 'InvalidSignatureException']);
  });
});
