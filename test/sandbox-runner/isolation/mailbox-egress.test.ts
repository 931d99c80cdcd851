import { ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { createServer as createHttpServer, type IncomingMessage, type Server } from 'node:http';
import { createServer as createHttpsServer, request as httpsRequest } from 'node:https';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEgressForwarderHandler } from '../../../functions/handlers/egress-forwarder.ts';
import { createOutboundFetch, type OutboundFetch } from '../../../functions/outbound/outbound-fetch.ts';
import { createOutboundPolicy } from '../../../functions/outbound/outbound-policy.ts';
import { startLambdaInvokeServer, type LocalFunction } from '../../../local/lambda-invoke-server.ts';
import { closeServer, listenOnLoopback } from '../../../local/net/listen.ts';
import { LOCAL_S3_CREDENTIALS, startS3Server } from '../../../local/s3-server.ts';
import { EGRESS_REQUEST_SUFFIX, egressGrantKey } from '../../../sandbox-runner/common/egress-mailbox.ts';
import { WORKSPACES_PREFIX } from '../../../sandbox-runner/common/workspace-prefix.ts';
import { createBwrapSandbox } from '../../../sandbox-runner/isolation/bwrap-sandbox.ts';
import { createProcessSandbox } from '../../../sandbox-runner/isolation/process-sandbox.ts';
import type { Sandbox } from '../../../sandbox-runner/isolation/sandbox.ts';
import { createMailboxCa, type MailboxCa } from '../../../sandbox-runner/isolation/mailbox-ca.ts';
import { createRunner, DEFAULT_RUNNER_LIMITS, type Runner } from '../../../sandbox-runner/runner.ts';
import { createS3ClientFactory } from '../../../sandbox-runner/s3-client.ts';
import { bashOutput } from '../../support/runner-fixture.ts';
import { makeTempDir } from '../../support/temp-dir.ts';

const BUCKET = 'stratus-mailbox';
const FORWARDER = 'stratus-egress-forwarder';

/**
 * The runner's end of the egress mailbox with the real far end: a command's curl goes to its
 * mailbox proxy, which writes the request under the workspace's prefix of the S3 stand-in; the
 * stand-in's notification invokes the egress forwarder's handler through the local Lambda
 * Invoke API; the forwarder checks the workspace's grant and fetches from a server on loopback;
 * the proxy reads the answer and hands it to curl. Plain http, and https through the runner's
 * per-workspace CA, which the command trusts through its environment.
 */
describe.each(['bwrap', 'process'] as const)('egress through the S3 mailbox (%s sandbox)', (kind) => {
  const temp = makeTempDir('stratus-mailbox-');
  let s3: Awaited<ReturnType<typeof startS3Server>>;
  let lambda: Awaited<ReturnType<typeof startLambdaInvokeServer>>;
  let plain: Server;
  let secure: Server;
  let plainHost: string;
  let secureHost: string;
  let upstreamCa: MailboxCa;
  let runner: Runner;
  const seen: string[] = [];
  const functions: Record<string, LocalFunction> = {};
  const client = () => createS3ClientFactory({ region: 'us-east-1', endpoint: s3.url })({ ...LOCAL_S3_CREDENTIALS });
  let counter = 0;

  beforeAll(async () => {
    const record = (req: IncomingMessage) => seen.push(`${req.method} ${req.headers.host}${req.url} ua=${req.headers['user-agent']?.split('/')[0]}`);
    plain = createHttpServer((req, res) => (record(req), res.writeHead(200, { 'content-type': 'text/plain' }).end(`plain ${req.url}\n`)));
    plainHost = new URL(await listenOnLoopback(plain)).host;
    // The upstream's own certificate, from a CA the far end trusts (as a public registry's is).
    upstreamCa = await createMailboxCa('upstream');
    secure = createHttpsServer(await upstreamCa.certificateFor('localhost'), (req, res) => {
      record(req);
      res.writeHead(201, { 'content-type': 'application/json', 'x-upstream': 'yes' }).end('{"secure":true}');
    });
    await new Promise<void>((resolve) => secure.listen(0, '127.0.0.1', resolve));
    secureHost = `localhost:${(secure.address() as { port: number }).port}`;
    // The Invoke server reads this table per call: the forwarder joins once S3 (its dependency) listens.
    lambda = await startLambdaInvokeServer({ functions });
    s3 = await startS3Server({
      dir: path.join(temp.dir, 's3'),
      buckets: [BUCKET],
      notifications: [{ prefix: WORKSPACES_PREFIX, suffix: EGRESS_REQUEST_SUFFIX, lambdaUrl: lambda.url, functionName: FORWARDER }],
    });
    const policy = createOutboundPolicy({ privateNetworkAllow: [plainHost, secureHost], ownEndpoints: [s3.url, lambda.url] });
    const outbound = createOutboundFetch(policy, { maxResponseBytes: 1024 * 1024 });
    const fetch: OutboundFetch = (input, init) => (new URL(input).protocol === 'https:' ? httpsFetch(input, init, upstreamCa.certPem) : outbound(input, init));
    const handler = createEgressForwarderHandler({ STRATUS_BUCKET: BUCKET }, { s3: async () => client(), fetch });
    functions[FORWARDER] = (event) => handler(event as Parameters<typeof handler>[0]);
    const rootDir = path.join(temp.dir, 'runner');
    const sandbox: Sandbox =
      kind === 'bwrap'
        ? createBwrapSandbox({ runtimeDir: rootDir, egress: { kind: 'mailbox' } })
        : createProcessSandbox({ linkPath: path.join(rootDir, 'current'), egress: { kind: 'mailbox' } });
    runner = createRunner({
      rootDir,
      s3ForCredentials: createS3ClientFactory({ region: 'us-east-1', endpoint: s3.url }),
      sandbox,
      limits: DEFAULT_RUNNER_LIMITS,
    });
  }, 30_000);

  afterAll(async () => {
    await s3?.close();
    await lambda?.close();
    await closeServer(plain);
    await closeServer(secure);
    temp.cleanup();
  });

  const grant = (workspaceId: string, allowedDomains: string[]) =>
    client().send(
      new PutObjectCommand({
        Bucket: BUCKET,
        Key: egressGrantKey(workspaceId),
        Body: JSON.stringify({ allowedDomains, phase: 'setup', expiresAt: Date.now() + 60_000 }),
      }),
    );
  const bash = (workspaceId: string, command: string, allowedDomains: string[]) =>
    runner({
      sessionId: 'ses_mailbox',
      workspace: { bucket: BUCKET, id: workspaceId, version: 0, credentials: { ...LOCAL_S3_CREDENTIALS } },
      network: { allowedDomains },
      op: { type: 'bash', command, timeoutMs: 30_000 },
    });
  const mailboxObjects = async (workspaceId: string) =>
    ((await client().send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: `${WORKSPACES_PREFIX}${workspaceId}/egress/` }))).Contents ?? []).map(
      (o) => o.Key!,
    );
  const workspace = () => `ws_mailbox_${kind}_${++counter}`;

  it('relays plain http to a listed host through the mailbox, request and answer objects under the workspace prefix', async () => {
    const id = workspace();
    await grant(id, [plainHost]);
    seen.length = 0;
    const out = bashOutput(await bash(id, `curl -sS --fail-with-body http://${plainHost}/left-pad`, [plainHost]));
    expect(out).toBe('plain /left-pad\n');
    expect(seen).toEqual([`GET ${plainHost}/left-pad ua=curl`]);
    const keys = await mailboxObjects(id);
    expect(keys.filter((k) => k.endsWith('.egress-request.json'))).toHaveLength(1);
    expect(keys.filter((k) => k.endsWith('.egress-response'))).toHaveLength(1);
  }, 30_000);

  it('terminates TLS with the workspace CA the command trusts, relays the request as https, and keeps the CA key out of the sandbox', async () => {
    const id = workspace();
    await grant(id, [secureHost]);
    seen.length = 0;
    const out = bashOutput(
      await bash(
        id,
        `curl -sS -i --fail-with-body https://${secureHost}/pkg; echo; echo "ca=$SSL_CERT_FILE node=$NODE_EXTRA_CA_CERTS pip=$PIP_CERT git=$GIT_SSL_CAINFO cargo=$CARGO_HTTP_CAINFO"; ` +
          `grep -rl 'PRIVATE KEY' "$TMPDIR" 2>/dev/null | wc -l`,
        [secureHost],
      ),
    );
    // The proxy's answer to CONNECT, then the origin's own, through TLS the runner terminated.
    expect(out).toMatch(/^HTTP\/1\.1 200 Connection Established\r\n\r\nHTTP\/1\.1 201 Created/);
    expect(out).toContain('x-upstream: yes');
    expect(out).toContain('{"secure":true}');
    const bundle = kind === 'bwrap' ? '/tmp/.stratus-egress-ca.pem' : expect.stringContaining('.stratus-egress-ca.pem');
    const trust = /ca=(\S+) node=(\S+) pip=(\S+) git=(\S+) cargo=(\S+)/.exec(out)!;
    for (const value of trust.slice(1)) expect(value).toEqual(bundle);
    expect(out.trim().split('\n').at(-1)).toBe('0');
    expect(seen).toEqual([`GET ${secureHost}/pkg ua=curl`]);
  }, 30_000);

  it('relays only a path inside a tunnel: a request target naming another host is refused, nothing written', async () => {
    const id = workspace();
    await grant(id, [plainHost, secureHost]);
    seen.length = 0;
    const absolute = `curl -sS -w ' %{http_code}\\n' --request-target 'http://${plainHost}/left-pad' https://${secureHost}/`;
    const userinfo = `curl -sS -w '%{http_code}' --request-target '@${plainHost}/left-pad' https://${secureHost}/`;
    const out = bashOutput(await bash(id, `${absolute}; ${userinfo}`, [secureHost]));
    // An absolute URL is refused by the proxy; '@host' does not even parse as a request target (Node answers 400 itself).
    expect(out).toBe('The sandbox proxy relays a path on the host the tunnel was opened to, nothing else.\n 400\n400');
    expect(await mailboxObjects(id)).toEqual([]);
    expect(seen).toEqual([]);
  }, 30_000);

  it('refuses a host off the list in the runner, before anything is written to the mailbox', async () => {
    const id = workspace();
    await grant(id, [plainHost]);
    seen.length = 0;
    const out = bashOutput(
      await bash(id, `curl -sS -w '%{http_code}\\n' http://example.com/collect; curl -sS https://example.com/collect 2>&1 | head -c 200; echo`, [plainHost]),
    );
    expect(out).toContain('Blocked by the sandbox: example.com is not in this session');
    expect(out).toContain('403');
    expect(await mailboxObjects(id)).toEqual([]);
    expect(seen).toEqual([]);
  }, 30_000);

  it("gets the forwarder's refusal when the harness granted the workspace nothing, though the call lists the host", async () => {
    const id = workspace();
    seen.length = 0;
    const out = bashOutput(await bash(id, `curl -sS -w ' %{http_code}' http://${plainHost}/left-pad`, [plainHost]));
    expect(out).toBe('This workspace has no network grant now: its commands may not reach the network.\n 403');
    expect(seen).toEqual([]);
  }, 30_000);
});

/** The far end's fetch for the https upstream: node:https trusting the upstream's CA (a public registry's is trusted by default). */
function httpsFetch(input: string | URL, init: RequestInit = {}, ca: string): Promise<Response> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(new URL(input), { method: init.method ?? 'GET', headers: Object.fromEntries(new Headers(init.headers)), ca }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve(new Response(Buffer.concat(chunks), { status: res.statusCode ?? 502, headers: res.headers as Record<string, string> })));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(init.body ? Buffer.from(init.body as ArrayBuffer) : undefined);
  });
}
