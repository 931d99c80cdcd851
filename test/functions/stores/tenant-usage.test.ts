import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { StorageQuotaError, TenantUsageStore } from '../../../functions/stores/tenant-usage.ts';
import { useDynamoTables } from '../../support/dynamo-fixture.ts';

/** The storage counters against the DynamoDB-protocol server: conditional reservations under concurrency. */
describe('tenant storage usage', () => {
  const fx = useDynamoTables();
  const store = (quota: number) => new TenantUsageStore(fx.db, { usage: fx.tables.tenantUsage, sessions: fx.tables.sessions }, quota);
  const session = async (sessionId: string, tenantId: string) => fx.db.send(new PutCommand({ TableName: fx.tables.sessions, Item: { sessionId, tenantId } }));

  it('lets exactly as many concurrent reservations through as fit under the quota', async () => {
    const usage = store(1_000);
    await session('ses_q1', 'tenant-q1');
    const outcomes = await Promise.allSettled(Array.from({ length: 8 }, () => usage.reserve('tenant-q1', 'ses_q1', 300)));
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(3);
    const refused = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
    expect(refused).toHaveLength(5);
    for (const r of refused) {
      expect(r.reason).toBeInstanceOf(StorageQuotaError);
      expect(r.reason).toMatchObject({ status: 413, code: 'storage_quota' });
      expect(r.reason.message).toMatch(
        /^Tenant tenant-q1 stores 900 bytes and storing 300 more bytes would pass its storage quota of 1000 bytes \(STRATUS_TENANT_STORAGE_QUOTA_BYTES\)\./,
      );
    }
    expect(await usage.storedBytes('tenant-q1')).toBe(900);
    // A reservation larger than the whole quota is refused even for a tenant with nothing stored.
    await expect(usage.reserve('tenant-empty', 'ses_q1', 1_001)).rejects.toBeInstanceOf(StorageQuotaError);
    expect(await usage.storedBytes('tenant-empty')).toBe(0);
  });

  it('counts behind the caller, yet the next read and room check of the same process see the count', async () => {
    const usage = store(1_000);
    await session('ses_behind', 'tenant-q9');
    usage.addBehind('tenant-q9', 'ses_behind', 600, (err) => {
      throw err;
    });
    usage.addBehind('tenant-q9', 'ses_behind', 400, (err) => {
      throw err;
    });
    // Not awaited above: the room check must still find the tenant at its quota.
    await expect(usage.assertRoom('tenant-q9')).rejects.toBeInstanceOf(StorageQuotaError);
    await usage.settled();
    expect(await store(1_000).storedBytes('tenant-q9')).toBe(1_000);
    // A count that fails is reported, not thrown at anyone (the session was never created).
    const failures: unknown[] = [];
    const broken = new TenantUsageStore(fx.db, { usage: fx.tables.tenantUsage, sessions: 'no-such-table' }, 1_000);
    broken.addBehind('tenant-q10', 'ses_none', 5, (err) => failures.push(err));
    await broken.settled();
    expect(failures).toHaveLength(1);
  });

  it('gives a deleted session back exactly what it added, and charges a deleted session nothing', async () => {
    const usage = store(10_000);
    await session('ses_a', 'tenant-q2');
    await session('ses_b', 'tenant-q2');
    await Promise.all([usage.add('tenant-q2', 'ses_a', 1_200), usage.add('tenant-q2', 'ses_b', 700), usage.reserve('tenant-q2', 'ses_a', 300)]);
    expect(await usage.storedBytes('tenant-q2')).toBe(2_200);
    await expect(usage.assertRoom('tenant-q2')).resolves.toBeUndefined();

    expect(await usage.releaseSession('tenant-q2', 'ses_a')).toBe(1_500);
    expect(await usage.storedBytes('tenant-q2')).toBe(700);
    // Released twice (a purge run again): nothing more is given back.
    expect(await usage.releaseSession('tenant-q2', 'ses_a')).toBe(0);
    expect(await usage.storedBytes('tenant-q2')).toBe(700);

    await fx.db.send(
      new PutCommand({ TableName: fx.tables.sessions, Item: { sessionId: 'ses_b', tenantId: 'tenant-q2', deletedAt: 'now', storedBytes: 700 } }),
    );
    await usage.add('tenant-q2', 'ses_b', 5_000);
    expect(await usage.storedBytes('tenant-q2')).toBe(700);
    await usage.add('tenant-q2', 'ses_gone', 5_000);
    expect(await usage.storedBytes('tenant-q2')).toBe(700);
  });

  it('refuses more writes once a tenant is at its quota', async () => {
    const usage = store(1_000);
    await session('ses_full', 'tenant-q3');
    await usage.add('tenant-q3', 'ses_full', 1_000);
    await expect(usage.assertRoom('tenant-q3')).rejects.toThrow(
      'Tenant tenant-q3 stores 1000 bytes and has reached its storage quota of 1000 bytes (STRATUS_TENANT_STORAGE_QUOTA_BYTES).',
    );
  });
});
