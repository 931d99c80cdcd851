import { describe, expect, it } from 'vitest';
import { RUNNER_SLOT_LEASE_MS, RunnerCallSlots } from '../../../functions/stores/runner-call-slots.ts';
import { RunnerCallLimitError, withRunnerSlot } from '../../../functions/runner-client/runner-slot.ts';
import { useDynamoTables } from '../../support/dynamo-fixture.ts';

/** Each tenant's runner slots against the DynamoDB-protocol server: the cap holds under concurrency, dead calls' slots come back. */
describe("a tenant's runner call slots", () => {
  const fx = useDynamoTables();
  let now = Date.parse('2026-12-02T12:00:00Z');
  const slots = (cap: number) => new RunnerCallSlots(fx.db, fx.tables.tenantUsage, cap, () => now);

  it('lets exactly `cap` of many concurrent takes through, per tenant, and a given-back slot is taken again', async () => {
    const three = slots(3);
    const taken = await Promise.all(Array.from({ length: 8 }, () => three.take('tenant-s1')));
    expect(taken.filter(Boolean)).toHaveLength(3);
    // Another tenant has its own three.
    expect(await three.take('tenant-s2')).toEqual(expect.any(String));
    expect(await three.take('tenant-s1')).toBeUndefined();
    await three.give('tenant-s1', taken.find(Boolean)!);
    expect(await three.take('tenant-s1')).toEqual(expect.any(String));
    expect(Object.keys((await three.held('tenant-s1'))!)).toHaveLength(3);
  });

  it('gives a slot back behind the call: the next take of the same process finds it free, and settled waits for the write', async () => {
    const one = slots(1);
    // Back to back at a cap of one, with no wait for a slot: each call must find the last one's slot given back.
    for (let i = 0; i < 5; i++) expect(await withRunnerSlot(one, { tenantId: 'tenant-s6', clock: () => now }, async () => i)).toBe(i);
    const slot = await one.take('tenant-s6');
    one.giveBack('tenant-s6', slot!);
    await one.settled();
    // Read from the table, not this process's bookkeeping: the write landed.
    expect(await one.held('tenant-s6')).toEqual({});
  });

  it('lets dozens of concurrent takes on one fresh tenant all through while under the cap (lost races are retried, not refused)', async () => {
    const many = slots(50);
    const taken = await Promise.all(Array.from({ length: 32 }, () => many.take('tenant-s5')));
    expect(taken.filter(Boolean)).toHaveLength(32);
    expect(Object.keys((await many.held('tenant-s5'))!)).toHaveLength(32);
  });

  it('clears the slots of calls that died once their lease ran out, and only those', async () => {
    const two = slots(2);
    const dead = await two.take('tenant-s3');
    now += RUNNER_SLOT_LEASE_MS / 2;
    const live = await two.take('tenant-s3');
    expect(await two.take('tenant-s3')).toBeUndefined();
    now += RUNNER_SLOT_LEASE_MS / 2;
    const next = await two.take('tenant-s3');
    expect(next).toEqual(expect.any(String));
    expect(Object.keys((await two.held('tenant-s3'))!).sort()).toEqual([live, next].sort());
    expect(dead).not.toBe(next);
  });

  it('withRunnerSlot waits for a slot up to its bound, refuses past it with 429 and Retry-After, and gives the slot back after a failure', async () => {
    const one = new RunnerCallSlots(fx.db, fx.tables.tenantUsage, 1, Date.now);
    const call = { tenantId: 'tenant-s4', clock: Date.now };
    let release!: () => void;
    const holding = withRunnerSlot(one, call, () => new Promise<void>((resolve) => (release = resolve)));
    await new Promise((r) => setTimeout(r, 200));
    const refused = await withRunnerSlot(one, call, async () => 'ran').catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(RunnerCallLimitError);
    expect(refused).toMatchObject({ status: 429, code: 'runner_calls_limit', retryAfterSeconds: 5 });
    expect((refused as Error).message).toContain('already has 1 sandbox runner calls in flight, its limit (STRATUS_TENANT_RUNNER_CALLS)');
    // A waiting call runs once the first gives its slot back.
    const waiting = withRunnerSlot(one, { ...call, waitMs: 10_000 }, async () => 'ran after waiting');
    setTimeout(release, 1_200);
    await holding;
    expect(await waiting).toBe('ran after waiting');
    await expect(withRunnerSlot(one, call, async () => Promise.reject(new Error('runner broke')))).rejects.toThrow('runner broke');
    // Given back behind the failure: once the writes in flight settle, the table has no slot left.
    await one.settled();
    expect(await one.held('tenant-s4')).toEqual({});
    // No tenant named: not counted.
    expect(await withRunnerSlot(one, { clock: Date.now }, async () => 'uncounted')).toBe('uncounted');
  });
});
