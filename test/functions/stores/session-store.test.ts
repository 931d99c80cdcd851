import { S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EmbeddedServer } from '../../../local/service-child.ts';
import { SessionStore, type SessionRecord } from '../../../functions/stores/session-store.ts';
import { MessageStore } from '../../../functions/stores/message-store.ts';
import { BlobStore } from '../../../functions/stores/blob-store.ts';
import { LOCAL_S3_CREDENTIALS, startS3Server } from '../../../local/s3-server.ts';
import { SessionBusyError, NotFoundError } from '../../../functions/shared/errors.ts';
import { useDynamoTables } from '../../support/dynamo-fixture.ts';
import { makeTempDir } from '../../support/temp-dir.ts';

describe('SessionStore leases and MessageStore appends (against the DynamoDB protocol server)', () => {
  const fx = useDynamoTables();
  const TABLES = fx.tables;
  const tmp = makeTempDir();
  let s3Server: EmbeddedServer;
  let s3: S3Client;
  let sessions: SessionStore;
  let messages: MessageStore;

  beforeAll(async () => {
    s3Server = await startS3Server({ dir: `${tmp.dir}/s3`, buckets: ['b'] });
    s3 = new S3Client({
      region: 'us-east-1',
      endpoint: s3Server.url,
      forcePathStyle: true,
      credentials: LOCAL_S3_CREDENTIALS,
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
    sessions = new SessionStore(fx.db, TABLES.sessions);
    messages = new MessageStore(fx.db, TABLES.messages, new BlobStore(async () => s3, 'b'));
  });
  afterAll(async () => {
    s3.destroy();
    await s3Server.close();
    tmp.cleanup();
  });

  const record = (sessionId: string): SessionRecord => ({
    sessionId,
    tenantId: 't',
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
    status: 'idle',
    messageCount: 0,
    workspace: { id: 'ws', version: 0 },
    cwd: '/workspace',
    usage: { inputTokens: 0, outputTokens: 0 },
    turnCount: 0,
  });

  it("grants one lease at a time, hands it to another owner once it expires, and refuses the old owner's writes", async () => {
    await sessions.create(record('s1'));
    await sessions.acquireLease('s1', { owner: 'a', turnId: 't1', expiresAt: 1_000 }, 0);
    await expect(sessions.acquireLease('s1', { owner: 'b', turnId: 't2', expiresAt: 2_000 }, 500)).rejects.toBeInstanceOf(SessionBusyError);
    // Past expiry, another owner takes over, and the old owner's writes are refused.
    await sessions.acquireLease('s1', { owner: 'b', turnId: 't2', expiresAt: 5_000 }, 1_001);
    await expect(sessions.updateUnderLease('s1', 'a', { cwd: '/workspace/x' })).rejects.toThrow();
    await sessions.updateUnderLease('s1', 'b', { cwd: '/workspace/y' }, 9_000);
    expect(await sessions.get('s1')).toMatchObject({ cwd: '/workspace/y', lease: { owner: 'b', expiresAt: 9_000 } });
    await sessions.releaseLease('s1', 'b', { status: 'idle' });
    expect((await sessions.get('s1'))!.lease).toBeUndefined();
  });

  it('takes the lease for a reader that saw the session free only while no lease was taken since it read', async () => {
    await sessions.create(record('s-untaken'));
    const fresh = (await sessions.get('s-untaken'))!;
    expect(fresh.leaseEpoch).toBeUndefined();
    // Read free, nobody took it since: taken, and the count moves.
    const first = await sessions.acquireLeaseIfUntaken('s-untaken', { owner: 'a', turnId: 't1', expiresAt: 1_000 }, 0, fresh);
    expect(first).toMatchObject({ lease: { owner: 'a' }, leaseEpoch: 1 });
    await sessions.releaseLease('s-untaken', 'a', { status: 'idle' });
    const seen = (await sessions.get('s-untaken'))!;
    // Another whole lease came and went after `seen` was read (free before and after): refused, nothing written.
    await sessions.acquireLease('s-untaken', { owner: 'b', turnId: 't2', expiresAt: 2_000 }, 10);
    await sessions.releaseLease('s-untaken', 'b', { status: 'idle' });
    expect(await sessions.acquireLeaseIfUntaken('s-untaken', { owner: 'c', turnId: 't3', expiresAt: 3_000 }, 20, seen)).toBeUndefined();
    expect(await sessions.acquireLeaseIfUntaken('s-untaken', { owner: 'c', turnId: 't3', expiresAt: 3_000 }, 20, fresh)).toBeUndefined();
    expect((await sessions.get('s-untaken'))!).toMatchObject({ leaseEpoch: 2 });
    expect((await sessions.get('s-untaken'))!.lease).toBeUndefined();
    // A held lease refuses it too (undefined, not an error: acquireLease then says busy).
    const now = (await sessions.get('s-untaken'))!;
    await sessions.acquireLease('s-untaken', { owner: 'd', turnId: 't4', expiresAt: 9_000 }, 30);
    expect(await sessions.acquireLeaseIfUntaken('s-untaken', { owner: 'e', turnId: 't5', expiresAt: 9_000 }, 40, now)).toBeUndefined();
    await expect(sessions.acquireLease('s-untaken', { owner: 'e', turnId: 't5', expiresAt: 9_000 }, 40)).rejects.toBeInstanceOf(SessionBusyError);
  });

  it('lets only the lease holder claim the set-up, once: a second claim, or one by a holder whose lease was taken, is refused', async () => {
    await sessions.create(record('s-setup'));
    const setup = {
      status: 'running' as const,
      source: 'repository_file' as const,
      turnId: 't1',
      startedAt: '2026-01-01T00:00:00.000Z',
      timeoutSeconds: 600,
      allowedDomains: ['registry.npmjs.org'],
    };
    await sessions.acquireLease('s-setup', { owner: 'a', turnId: 't1', expiresAt: 1_000 }, 0);
    // Two claims at once by the holder: exactly one wins.
    const both = await Promise.all([sessions.claimSetup('s-setup', 'a', setup), sessions.claimSetup('s-setup', 'a', { ...setup, turnId: 't1b' })]);
    expect(both.filter(Boolean)).toHaveLength(1);
    expect((await sessions.get('s-setup'))!.setup).toMatchObject({ status: 'running', allowedDomains: ['registry.npmjs.org'] });
    // A turn that took over the dead holder's lease finds the record and cannot claim again; the old holder cannot either.
    await sessions.acquireLease('s-setup', { owner: 'b', turnId: 't2', expiresAt: 5_000 }, 1_001);
    expect(await sessions.claimSetup('s-setup', 'b', { ...setup, turnId: 't2' })).toBe(false);
    await sessions.create(record('s-setup-2'));
    await sessions.acquireLease('s-setup-2', { owner: 'a', turnId: 't1', expiresAt: 1_000 }, 0);
    await sessions.acquireLease('s-setup-2', { owner: 'b', turnId: 't2', expiresAt: 5_000 }, 1_001);
    expect(await sessions.claimSetup('s-setup-2', 'a', setup)).toBe(false);
    expect((await sessions.get('s-setup-2'))!.setup).toBeUndefined();
  });

  it('404s a lease on a missing session and hides other tenants', async () => {
    await expect(sessions.acquireLease('missing', { owner: 'a', turnId: 't', expiresAt: 1 }, 0)).rejects.toBeInstanceOf(NotFoundError);
    await sessions.create(record('s2'));
    await expect(sessions.getForTenant('s2', 'other')).rejects.toBeInstanceOf(NotFoundError);
  });

  it('never overwrites a message sequence number', async () => {
    const m = {
      sessionId: 's3',
      seq: 0,
      uuid: 'u',
      turnId: 't',
      kind: 'prompt' as const,
      role: 'user' as const,
      content: [{ type: 'text' as const, text: 'a' }],
      createdAt: 'now',
    };
    await messages.append(m);
    await expect(messages.append({ ...m, content: [{ type: 'text', text: 'b' }] })).rejects.toThrow();
    expect((await messages.loadFrom('s3')).map((x) => x.content)).toEqual([[{ type: 'text', text: 'a' }]]);
  });

  it('pages through a long log in order', async () => {
    for (let seq = 0; seq < 25; seq++) {
      await messages.append({ sessionId: 's4', seq, uuid: `u${seq}`, turnId: 't', kind: 'prompt', role: 'user', content: [], createdAt: 'now' });
    }
    const seqs: number[] = [];
    let cursor: string | undefined;
    do {
      const page = await messages.page('s4', { limit: 10, cursor });
      seqs.push(...page.messages.map((m) => m.seq));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seqs).toEqual(Array.from({ length: 25 }, (_, i) => i));
    expect((await messages.loadFrom('s4', 20)).map((m) => m.seq)).toEqual([20, 21, 22, 23, 24]);
  });
});
