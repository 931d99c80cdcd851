import { DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import { HeadObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../local/stack.ts';
import { LOCAL_CREDENTIALS } from '../../local/local-credentials.ts';
import { LOCAL_BUCKET } from '../../local/stack.ts';
import { apiClient } from '../support/api-client.ts';
import { useLocalStack } from '../support/stack-fixture.ts';

/**
 * A session that allow-lists the local stack's own ports tries, from Bash, what issue #25 found
 * open: listing and reading another tenant's workspace objects and writing into its prefix
 * unsigned on the S3 stand-in, a Scan of the messages table on the DynamoDB stand-in (signed
 * with the stack's own key, as if it had leaked, so only the network stops it), and the Lambda Invoke
 * server, the API and the scripted model server, under every spelling of this host. Each is
 * refused by the sandbox's proxy with the same sentence, and the runner keeps serving.
 */
describe("a sandbox never reaches the stack's own services (through the API)", () => {
  // The operator lets sessions list every loopback spelling (STRATUS_PRIVATE_NETWORK_ALLOW), so the
  // sandbox's own refusal is what stands between a command and the services.
  const operator = { model: {}, turn: {}, api: {}, observability: {}, outbound: { privateNetworkAllow: ['127.0.0.0/8', '0.0.0.0/32', '::1/128'] } };
  const fx = useLocalStack({ apiTokens: { 'tok-victim': 'victim', 'tok-attacker': 'attacker' }, settings: operator });
  let stack: LocalStack;
  let victim: ReturnType<typeof apiClient>;
  let attacker: ReturnType<typeof apiClient>;
  let victimWorkspace: string;
  const port = (url: string) => Number(new URL(url).port);
  beforeAll(async () => {
    stack = fx.stack;
    victim = apiClient(stack.apiUrl, 'tok-victim');
    attacker = apiClient(stack.apiUrl, 'tok-attacker');
    const sessionId = await victim.createSession({ 'secret.txt': "the victim's secret\n" });
    stack.model!.enqueue({ content: [{ type: 'text', text: 'noted' }] });
    expect((await victim.turn(sessionId, 'remember the launch code 0000')).status).toBe(200);
    victimWorkspace = (await victim.request('GET', `/v1/sessions/${sessionId}`)).json.workspace.id;
  });

  const blocked = (hostPort: string, address?: string) =>
    `Blocked by the sandbox: ${hostPort}${address ? ` (${address})` : ''} is one of this Stratus deployment's own services (its database, storage, functions, API or model); a sandbox can never reach them, whatever its allowed network domains say.`;

  async function bash(allowedDomains: string[], command: string): Promise<string> {
    const created = await attacker.request('POST', '/v1/sessions', { settings: { allowedDomains } });
    expect(created.status).toBe(201);
    stack.model!.enqueue({ content: [{ type: 'tool_use', name: 'Bash', input: { command } }] }, { content: [{ type: 'text', text: 'done' }] });
    const res = await attacker.turn(created.json.id, 'run it');
    expect(res.status).toBe(200);
    return res.json.events.find((e: { type: string }) => e.type === 'tool_result').content;
  }

  it("refuses listing, reading and unsigned writes of another tenant's workspace on the S3 stand-in", async () => {
    const s3 = `127.0.0.1:${port(stack.urls.s3)}`;
    const key = `workspaces/${victimWorkspace}/planted`;
    const out = await bash(
      [s3],
      [
        `curl -sS "http://${s3}/${LOCAL_BUCKET}?list-type=2&prefix=workspaces/"`,
        `curl -sS "http://${s3}/${LOCAL_BUCKET}/workspaces/${victimWorkspace}/deltas/0000000001.json"`,
        `curl -sS -X PUT --data-binary pwned "http://${s3}/${LOCAL_BUCKET}/${key}"`,
      ].join('; echo; '),
    );
    expect(out).toBe([blocked(s3), blocked(s3), blocked(s3)].join('\n\n'));
    const client = new S3Client({ region: 'us-east-1', endpoint: stack.urls.s3, forcePathStyle: true, credentials: stack.deps.config.localCredentials });
    const planted = await client
      .send(new HeadObjectCommand({ Bucket: LOCAL_BUCKET, Key: key }))
      .catch((err: { $metadata?: { httpStatusCode?: number } }) => err.$metadata?.httpStatusCode);
    expect(planted).toBe(404);
  });

  it("refuses a Scan of the messages table on the DynamoDB stand-in, even signed with the stack's own key", async () => {
    const dynamo = `127.0.0.1:${port(stack.urls.dynamodb)}`;
    const { accessKeyId, secretAccessKey } = stack.deps.config.localCredentials!;
    const out = await bash(
      [dynamo],
      [
        `curl -sS -X POST --aws-sigv4 aws:amz:us-east-1:dynamodb --user ${accessKeyId}:${secretAccessKey}`,
        `-H 'x-amz-target: DynamoDB_20120810.Scan' -H 'content-type: application/x-amz-json-1.0'`,
        `-d '{"TableName":"stratus-messages"}' http://${dynamo}/`,
      ].join(' '),
    );
    expect(out).toBe(blocked(dynamo));
  });

  it('refuses the Lambda Invoke server, the API and the scripted model server', async () => {
    const lambda = `127.0.0.1:${port(stack.urls.lambda)}`;
    const api = `127.0.0.1:${port(stack.apiUrl)}`;
    const model = `127.0.0.1:${port(stack.urls.model)}`;
    const out = await bash(
      [lambda, api, model],
      [
        `curl -sS -X POST -d '{}' http://${lambda}/2015-03-31/functions/stratus-tenant-runner/invocations`,
        `curl -sS http://${api}/healthz`,
        `curl -sS http://${model}/_requests`,
      ].join('; echo; '),
    );
    expect(out).toBe([blocked(lambda), blocked(api), blocked(model)].join('\n\n'));
  });

  it('refuses every other spelling of this host, by plain HTTP and by CONNECT, and keeps serving', async () => {
    const p = port(stack.urls.s3);
    const spellings = ['localhost', '127.0.0.2', '0.0.0.0', '[::1]', '[::ffff:127.0.0.1]'];
    const allowed = [...spellings.map((host) => `${host}:${p}`), '127.0.0.1', '::1'];
    const connect = (authority: string) =>
      `exec 3<>/dev/tcp/127.0.0.1/3128; printf 'CONNECT ${authority} HTTP/1.1\\r\\nHost: ${authority}\\r\\n\\r\\n' >&3; sed -n '1p;$p' <&3 | tr -d '\\r'; exec 3>&-`;
    const out = await bash(
      allowed,
      [...spellings.map((host) => `curl -sS "http://${host}:${p}/${LOCAL_BUCKET}?list-type=2"`), connect(`127.0.0.2:${p}`), 'echo still serving'].join(
        '; echo; ',
      ),
    );
    const localhostAddress = /\(([^)]+)\) is one of/.exec(out)?.[1];
    expect(['127.0.0.1', '::1']).toContain(localhostAddress);
    expect(out).toBe(
      [
        blocked(`localhost:${p}`, localhostAddress),
        blocked(`127.0.0.2:${p}`),
        blocked(`0.0.0.0:${p}`),
        blocked(`[::1]:${p}`),
        // The proxy names the host as a URL parser writes it.
        blocked(`[::ffff:7f00:1]:${p}`, '127.0.0.1'),
        `HTTP/1.1 403 Forbidden\n${blocked(`127.0.0.2:${p}`)}`,
        'still serving',
      ].join('\n\n'),
    );
  });

  it("refuses a git import from one of the stack's services (git goes through the same proxy)", async () => {
    const s3 = `127.0.0.1:${port(stack.urls.s3)}`;
    const sessionId = await attacker.createSession();
    const url = `http://${s3}/${LOCAL_BUCKET}/workspaces/${victimWorkspace}.git`;
    const res = await attacker.request('POST', `/v1/sessions/${sessionId}/workspace/git`, { url });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(res.json.error.message).toContain(`remote: ${blocked(s3)}`);
  });

  it('has its stand-ins check a key made for this stack: the published one is refused', async () => {
    const published = LOCAL_CREDENTIALS;
    expect(stack.deps.config.localCredentials?.secretAccessKey).not.toBe(published.secretAccessKey);
    const s3 = new S3Client({ region: 'us-east-1', endpoint: stack.urls.s3, forcePathStyle: true, credentials: published });
    const list = await s3.send(new ListObjectsV2Command({ Bucket: LOCAL_BUCKET, Prefix: 'workspaces/' })).then(
      () => 'listed',
      (e: { name: string }) => e.name,
    );
    expect(list).toBe('SignatureDoesNotMatch');
    const dynamo = new DynamoDBClient({ region: 'us-east-1', endpoint: stack.urls.dynamodb, credentials: published, maxAttempts: 1 });
    const scan = await dynamo.send(new ScanCommand({ TableName: 'stratus-messages' })).then(
      () => 'scanned',
      (e: { name: string }) => e.name,
    );
    expect(scan).toBe('InvalidSignatureException');
    s3.destroy();
    dynamo.destroy();
  });
});
