import { GetObjectCommand } from '@aws-sdk/client-s3';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withEgressGrants } from '../../../functions/runner-client/egress-grants.ts';
import type { RunnerClient } from '../../../functions/runner-client/runner-client.ts';
import { LOCAL_S3_CREDENTIALS, startS3Server } from '../../../local/s3-server.ts';
import { egressGrantKey } from '../../../sandbox-runner/common/egress-mailbox.ts';
import type { RunnerRequest, RunnerResponse } from '../../../sandbox-runner/protocol.ts';
import { createS3ClientFactory } from '../../../sandbox-runner/s3-client.ts';
import { makeTempDir } from '../../support/temp-dir.ts';

const BUCKET = 'grants';
const NOW = 1_800_000_000_000;
const OK: RunnerResponse = { ok: true, result: { type: 'read', kind: 'text', content: '' } } as unknown as RunnerResponse;

/**
 * The grant writer against the S3 stand-in: what the egress forwarder will find in
 * `egress-grants/{workspace}.json` while each runner call runs, read by the runner stand-in
 * below at the moment it is invoked.
 */
describe('egress grants written around runner calls (the mailbox mode)', () => {
  const temp = makeTempDir('stratus-grants-');
  let s3: Awaited<ReturnType<typeof startS3Server>>;
  const client = () => createS3ClientFactory({ region: 'us-east-1', endpoint: s3.url })({ ...LOCAL_S3_CREDENTIALS });
  const grantNow = (workspaceId: string) =>
    client()
      .send(new GetObjectCommand({ Bucket: BUCKET, Key: egressGrantKey(workspaceId) }))
      .then(
        async (out) => JSON.parse(await out.Body!.transformToString()) as unknown,
        (err: { name?: string }) => err.name,
      );
  const seenDuringCall: unknown[] = [];
  const runner: RunnerClient = {
    async invoke(request) {
      seenDuringCall.push(await grantNow(request.workspace.id));
      return OK;
    },
  };
  const granting = () => withEgressGrants(runner, { s3: async () => client(), bucket: BUCKET, clock: () => NOW });
  const request = (workspaceId: string, op: RunnerRequest['op'], network?: RunnerRequest['network']): RunnerRequest => ({
    sessionId: 'ses_1',
    workspace: { bucket: 'w', id: workspaceId, version: 1, credentials: { ...LOCAL_S3_CREDENTIALS } },
    ...(network ? { network } : {}),
    op,
  });

  beforeAll(async () => {
    s3 = await startS3Server({ dir: path.join(temp.dir, 's3'), buckets: [BUCKET] });
  });
  afterAll(async () => {
    await s3.close();
    temp.cleanup();
  });

  it("grants a turn's command the session's own list for an hour, and keeps it after the call", async () => {
    seenDuringCall.length = 0;
    await granting().invoke(request('ws_agent', { type: 'bash', command: 'curl x', timeoutMs: 1_000 }, { allowedDomains: ['api.example.com'] }));
    const expected = { allowedDomains: ['api.example.com'], phase: 'agent', expiresAt: NOW + 60 * 60_000 };
    expect(seenDuringCall).toEqual([expected]);
    expect(await grantNow('ws_agent')).toEqual(expected);
  });

  it('grants the set-up its registries for its own time limit only while it runs, then deletes the grant', async () => {
    seenDuringCall.length = 0;
    const setup = request('ws_setup', { type: 'bash', command: 'npm ci', timeoutMs: 300_000 }, { allowedDomains: ['registry.npmjs.org'], phase: 'setup' });
    await granting().invoke(setup);
    expect(seenDuringCall).toEqual([{ allowedDomains: ['registry.npmjs.org'], phase: 'setup', expiresAt: NOW + 300_000 + 60_000 }]);
    expect(await grantNow('ws_setup')).toBe('NoSuchKey');
  });

  it('deletes a grant an earlier call left when a command runs with no list, and leaves ops that run no command alone', async () => {
    const writer = granting();
    await writer.invoke(request('ws_drop', { type: 'bash', command: 'true', timeoutMs: 1_000 }, { allowedDomains: ['api.example.com'] }));
    seenDuringCall.length = 0;
    // A read runs no command: the grant is neither written nor deleted for it.
    await writer.invoke(request('ws_drop', { type: 'read', path: '/workspace/a' }));
    expect(seenDuringCall).toEqual([expect.objectContaining({ phase: 'agent' })]);
    await writer.invoke(request('ws_drop', { type: 'bash', command: 'true', timeoutMs: 1_000 }));
    expect(seenDuringCall.at(-1)).toBe('NoSuchKey');
    expect(await grantNow('ws_drop')).toBe('NoSuchKey');
  });
});
