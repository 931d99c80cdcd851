import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { createServer, type Server } from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forwardEgressRequest, type EgressForwarderDeps } from '../../../functions/outbound/egress-forwarder.ts';
import { createOutboundFetch } from '../../../functions/outbound/outbound-fetch.ts';
import { createOutboundPolicy } from '../../../functions/outbound/outbound-policy.ts';
import { createEgressForwarderHandler } from '../../../functions/handlers/egress-forwarder.ts';
import { closeServer, listenOnLoopback } from '../../../local/net/listen.ts';
import { LOCAL_S3_CREDENTIALS, startS3Server } from '../../../local/s3-server.ts';
import { decodeEgressResponse, egressGrantKey, egressRequestKey, egressResponseKey, type EgressGrant } from '../../../sandbox-runner/common/egress-mailbox.ts';
import { createS3ClientFactory } from '../../../sandbox-runner/s3-client.ts';
import { makeTempDir } from '../../support/temp-dir.ts';

const BUCKET = 'b';
const NOW = 1_800_000_000_000;

/**
 * The egress forwarder against the S3 stand-in and a registry on loopback: a sandboxed
 * command's request object in, the response object out, only for a host the workspace's grant
 * lists, and only to addresses the outbound policy allows.
 */
describe('egress forwarder (the far end of the S3 mailbox)', () => {
  const temp = makeTempDir('stratus-egress-forwarder-');
  let s3: Awaited<ReturnType<typeof startS3Server>>;
  let registry: Server;
  let registryHost: string;
  const hits: string[] = [];
  const TARBALL = Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 7) % 256));
  const client = () => createS3ClientFactory({ region: 'us-east-1', endpoint: s3.url })({ ...LOCAL_S3_CREDENTIALS });
  let deps: EgressForwarderDeps;
  let counter = 0;

  beforeAll(async () => {
    s3 = await startS3Server({ dir: path.join(temp.dir, 's3'), buckets: [BUCKET] });
    registry = createServer((req, res) => {
      hits.push(`${req.method} ${req.url} ua=${req.headers['user-agent'] ?? ''} proxy=${req.headers['proxy-authorization'] ?? ''}`);
      if (req.url === '/left-pad/-/left-pad-1.3.0.tgz') return void res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(TARBALL);
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    });
    const url = new URL(await listenOnLoopback(registry));
    registryHost = url.host;
    // The loopback registry stands for a public one: the operator setting admits it, as locally.
    const policy = createOutboundPolicy({ privateNetworkAllow: [registryHost], ownEndpoints: [s3.url] });
    deps = { s3: async () => client(), bucket: BUCKET, fetch: createOutboundFetch(policy, { maxResponseBytes: 1024 * 1024 }), clock: () => NOW };
  });
  afterAll(async () => {
    await closeServer(registry);
    await s3.close();
    temp.cleanup();
  });

  const put = (key: string, body: string) => client().send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: body }));
  const grant = (workspaceId: string, g: Partial<EgressGrant>) =>
    put(egressGrantKey(workspaceId), JSON.stringify({ allowedDomains: [registryHost], phase: 'setup', expiresAt: NOW + 60_000, ...g }));
  async function send(workspaceId: string, url: string, headers: Record<string, string> = {}) {
    const requestId = `r${++counter}`;
    const key = egressRequestKey(workspaceId, requestId);
    await put(key, JSON.stringify({ method: 'GET', url, headers }));
    const decision = await forwardEgressRequest(deps, key);
    const out = await client().send(new GetObjectCommand({ Bucket: BUCKET, Key: egressResponseKey(workspaceId, requestId) }));
    return { decision, response: decodeEgressResponse(await out.Body!.transformToByteArray()) };
  }

  it('forwards a request to a host the grant lists and writes the answer, bytes unchanged, beside the request', async () => {
    await grant('ws_fwd_ok', {});
    hits.length = 0;
    const { decision, response } = await send('ws_fwd_ok', `http://${registryHost}/left-pad/-/left-pad-1.3.0.tgz`, {
      'user-agent': 'npm/11',
      'proxy-authorization': 'Basic eDp5',
    });
    expect(decision).toEqual({ kind: 'forwarded', workspaceId: 'ws_fwd_ok', host: '127.0.0.1', status: 200 });
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('application/octet-stream');
    expect(response.body.equals(TARBALL)).toBe(true);
    // The proxy's own credentials are a hop header: they never leave for the registry.
    expect(hits).toEqual(['GET /left-pad/-/left-pad-1.3.0.tgz ua=npm/11 proxy=']);
  });

  it('answers 403 without calling anything when the workspace has no grant, an expired one, or one without the host', async () => {
    await grant('ws_fwd_expired', { expiresAt: NOW - 1 });
    await grant('ws_fwd_other', { allowedDomains: ['registry.npmjs.org'] });
    hits.length = 0;
    const url = `http://${registryHost}/left-pad/-/left-pad-1.3.0.tgz`;
    for (const [ws, reason] of [
      ['ws_fwd_none', 'This workspace has no network grant now: its commands may not reach the network.'],
      ['ws_fwd_expired', 'This workspace has no network grant now: its commands may not reach the network.'],
      ['ws_fwd_other', `127.0.0.1:${registryHost.split(':')[1]} is not on this workspace's allow-list (setup).`],
    ] as const) {
      const { decision, response } = await send(ws, url);
      expect(decision).toMatchObject({ kind: 'refused', workspaceId: ws, status: 403, reason });
      expect([response.status, response.headers['x-stratus-egress'], response.body.toString()]).toEqual([403, 'refused', `${reason}\n`]);
    }
    expect(hits).toEqual([]);
  });

  it('refuses a listed host at a non-public address the operator did not allow (the grant cannot open private networks)', async () => {
    const strict: EgressForwarderDeps = {
      ...deps,
      fetch: createOutboundFetch(createOutboundPolicy({ privateNetworkAllow: [], ownEndpoints: [] }), { maxResponseBytes: 1024 }),
    };
    await grant('ws_fwd_private', {});
    hits.length = 0;
    const key = egressRequestKey('ws_fwd_private', 'p1');
    await put(key, JSON.stringify({ method: 'GET', url: `http://${registryHost}/x` }));
    const decision = await forwardEgressRequest(strict, key);
    expect(decision).toMatchObject({ kind: 'refused', status: 403 });
    expect((decision as { reason: string }).reason).toMatch(/^Refused to call http:\/\/127\.0\.0\.1:\d+: /);
    expect(hits).toEqual([]);
  });

  it('ignores objects that are not mailbox requests, and answers 400 to a malformed one', async () => {
    for (const key of [
      'workspaces/ws_a/blobs/abc',
      egressGrantKey('ws_a'),
      'tool-results/x/egress/r1.egress-request.json',
      'workspaces/ws_a/egress/../r.egress-request.json',
    ]) {
      expect(await forwardEgressRequest(deps, key)).toEqual({ kind: 'ignored', key });
    }
    await grant('ws_fwd_bad', {});
    const key = egressRequestKey('ws_fwd_bad', 'bad1');
    await put(key, '{"method":"CONNECT","url":"x"}');
    expect(await forwardEgressRequest(deps, key)).toMatchObject({ kind: 'refused', status: 400, reason: 'The egress request object is not a valid request.' });
  });

  it('is what the Lambda handler runs for each record of an S3 notification (keys URL-encoded)', async () => {
    await grant('ws_fwd_event', {});
    const key = egressRequestKey('ws_fwd_event', 'e1');
    await put(key, JSON.stringify({ method: 'GET', url: `http://${registryHost}/nothing-here` }));
    const handler = createEgressForwarderHandler({ STRATUS_BUCKET: BUCKET }, { s3: deps.s3, fetch: deps.fetch, clock: deps.clock });
    await handler({
      Records: [
        { s3: { bucket: { name: BUCKET }, object: { key: encodeURIComponent(key).replace(/%2F/g, '/') } } },
        { s3: { bucket: { name: 'other' }, object: { key } } },
      ],
    });
    const out = await client().send(new GetObjectCommand({ Bucket: BUCKET, Key: egressResponseKey('ws_fwd_event', 'e1') }));
    const response = decodeEgressResponse(await out.Body!.transformToByteArray());
    expect([response.status, response.body.toString()]).toEqual([404, 'not found']);
  });
});
