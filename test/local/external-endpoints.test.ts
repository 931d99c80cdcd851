import { DynamoDBClient, ListTablesCommand, ScanCommand } from '@aws-sdk/client-dynamodb';
import { GetBucketVersioningCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { afterEach, describe, expect, it } from 'vitest';
import { SettingError } from '../../functions/deps/settings.ts';
import { tableNames } from '../../functions/stores/tables.ts';
import { startDynamoServer } from '../../local/dynamo-server.ts';
import { externalEndpointsFromEnv } from '../../local/external-endpoints.ts';
import { freshLocalCredentials } from '../../local/local-credentials.ts';
import { startS3Server } from '../../local/s3-server.ts';
import { LOCAL_BUCKET, startLocalStack, type LocalStack } from '../../local/stack.ts';
import { apiClient } from '../support/api-client.ts';
import { bash, text, unscripted } from '../support/stack-fixture.ts';
import { startStackProcess, type StackProcess } from '../support/stack-process.ts';
import { makeTempDir } from '../support/temp-dir.ts';

/** `npm start` against existing DynamoDB, S3 and Lambda endpoints (STRATUS_*_ENDPOINT) instead of its own stand-ins. */
describe('the local stack on existing endpoints', () => {
  const tmp = makeTempDir();
  const stops: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const stop of stops.splice(0).reverse()) await stop().catch(() => undefined);
  });
  const startSecond = async (dir: string, env: Record<string, string>): Promise<StackProcess> => {
    const second = await startStackProcess(dir, env);
    stops.push(() => second.stop());
    return second;
  };

  it("a second stack pointed at the first one's stand-ins keeps its sessions, workspaces and runner calls there", { timeout: 240_000 }, async () => {
    const first: LocalStack = await startLocalStack({ dataDir: `${tmp.dir}/first`, brain: unscripted, writeMetrics: () => undefined });
    stops.push(() => first.stop());
    const key = first.deps.config.localCredentials!;
    const second = await startSecond(`${tmp.dir}/second`, {
      STRATUS_DYNAMODB_ENDPOINT: first.urls.dynamodb,
      STRATUS_S3_ENDPOINT: first.urls.s3,
      STRATUS_LAMBDA_ENDPOINT: first.urls.lambda,
      AWS_ACCESS_KEY_ID: key.accessKeyId,
      AWS_SECRET_ACCESS_KEY: key.secretAccessKey,
    });
    // The banner names the endpoints in use, and no stand-in of its own.
    expect(second.printed().stdout).toMatch(new RegExp(`DynamoDB \\(existing\\) +${first.urls.dynamodb} +\\(STRATUS_DYNAMODB_ENDPOINT\\)`));
    expect(second.printed().stdout).not.toContain('DynamoDB stand-in');

    const api = apiClient(second.apiUrl, second.token);
    const sessionId = await api.createSession({ 'a.txt': 'from the second stack\n' });
    await second.script([{ content: [bash('toolu_w', 'cat a.txt > b.txt')] }, text('Copied.')]);
    expect((await api.turn(sessionId, 'copy it')).json).toMatchObject({ stopReason: 'end_turn' });

    // The session, its log and its workspace are in the first stack's DynamoDB and S3: its own API serves them.
    expect(await first.deps.sessions.get(sessionId)).toMatchObject({ tenantId: 'local' });
    expect((await first.deps.messages.loadFrom(sessionId)).map((m) => m.kind)).toEqual(['prompt', 'assistant', 'tool_result', 'assistant']);
    const file = await apiClient(first.apiUrl, first.token).request('GET', `/v1/sessions/${sessionId}/workspace/files/b.txt`);
    expect(file.status).toBe(200);
    expect(file.text).toBe('from the second stack\n');
  });

  it('creates the tables and a versioned bucket at endpoints that have neither', { timeout: 240_000 }, async () => {
    const credentials = freshLocalCredentials();
    const dynamo = await startDynamoServer({ dir: `${tmp.dir}/bare-dynamo`, credentials });
    stops.push(() => dynamo.close());
    // No bucket at start; the bucket is versioned once created, as S3 makes it on PutBucketVersioning.
    const s3 = await startS3Server({ dir: `${tmp.dir}/bare-s3`, buckets: [], versionedBuckets: [LOCAL_BUCKET], credentials });
    stops.push(() => s3.close());
    const second = await startSecond(`${tmp.dir}/third`, {
      STRATUS_DYNAMODB_ENDPOINT: dynamo.url,
      STRATUS_S3_ENDPOINT: s3.url,
      AWS_ACCESS_KEY_ID: credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
    });
    await apiClient(second.apiUrl, second.token).createSession({ 'a.txt': 'a\n' });

    const ddb = new DynamoDBClient({ region: 'us-east-1', endpoint: dynamo.url, credentials });
    const bucket = new S3Client({ region: 'us-east-1', endpoint: s3.url, credentials, forcePathStyle: true });
    stops.push(async () => (ddb.destroy(), bucket.destroy()));
    const tables = (await ddb.send(new ListTablesCommand({}))).TableNames ?? [];
    expect(tables).toEqual(expect.arrayContaining(Object.values(tableNames('stratus'))));
    expect((await ddb.send(new ScanCommand({ TableName: tableNames('stratus').sessions }))).Count).toBe(1);
    const objects = await bucket.send(new ListObjectsV2Command({ Bucket: LOCAL_BUCKET }));
    expect((objects.Contents ?? []).some((o) => o.Key!.startsWith('workspaces/'))).toBe(true);
    expect((await bucket.send(new GetBucketVersioningCommand({ Bucket: LOCAL_BUCKET }))).Status).toBe('Enabled');
  });

  it('refuses an endpoint that is not a URL, or one without the key to sign with, naming the variable', () => {
    const key = { AWS_ACCESS_KEY_ID: 'k', AWS_SECRET_ACCESS_KEY: 's' };
    expect(externalEndpointsFromEnv({})).toBeUndefined();
    expect(externalEndpointsFromEnv({ ...key, STRATUS_S3_ENDPOINT: 'http://127.0.0.1:9000/' })).toEqual({
      endpoints: { s3: 'http://127.0.0.1:9000' },
      credentials: { accessKeyId: 'k', secretAccessKey: 's' },
    });
    expect(() => externalEndpointsFromEnv({ ...key, STRATUS_DYNAMODB_ENDPOINT: 'localhost:8000' })).toThrow(
      /STRATUS_DYNAMODB_ENDPOINT: expected an http\(s\) URL/,
    );
    expect(() => externalEndpointsFromEnv({ ...key, STRATUS_LAMBDA_ENDPOINT: 'http://127.0.0.1:1/2015-03-31' })).toThrow(SettingError);
    expect(() => externalEndpointsFromEnv({ STRATUS_S3_ENDPOINT: 'http://127.0.0.1:9000' })).toThrow(/STRATUS_S3_ENDPOINT: set AWS_ACCESS_KEY_ID/);
  });
});
