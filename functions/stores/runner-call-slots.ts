import { randomUUID } from 'node:crypto';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { WritesBehind } from '../shared/writes-behind.ts';

/** The setting that sets the cap, named in every refusal. */
export const RUNNER_CALLS_SETTING = 'STRATUS_TENANT_RUNNER_CALLS';

/**
 * How long a taken slot counts when its call never gives it back (the harness was killed): past
 * the runner function's 900 s timeout (infra/config/stages.ts), so a live call is never dropped.
 */
export const RUNNER_SLOT_LEASE_MS = 16 * 60_000;

/**
 * Rounds of take → (lost a race: again; full: clear expired slots) → take again before the tenant
 * is refused; many takes at once on one tenant each lose a few races.
 */
const TAKE_ROUNDS = 8;
/** Expired slots one write clears at most (an expression's size is bounded). */
const CLEAR_AT_MOST = 25;

/**
 * Each tenant's runner calls in flight, against its cap (STRATUS_TENANT_RUNNER_CALLS): one item
 * per tenant in the tenantUsage table (`runner-calls#<tenant>`) whose `calls` map holds each
 * call's slot and when its lease runs out. Taking a slot is one conditional write
 * (`size(calls) < cap`), so harness instances on many Lambdas share the cap and none can pass it
 * on a stale read; a slot whose call died with its process counts until its lease runs out, and
 * the next take that finds the tenant full clears such slots.
 */
export class RunnerCallSlots {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
    readonly cap: number,
    private readonly clock: () => number,
  ) {}

  /** Slots given back in the background and not yet removed, per tenant. */
  private readonly giving = new WritesBehind();

  /**
   * A slot's id for one call, or undefined when the tenant has `cap` live calls. Slots this
   * process is still giving back (giveBack) are gone first, so a caller that ends a call and
   * starts the next never finds its own previous call still counted.
   */
  async take(tenantId: string): Promise<string | undefined> {
    await this.giving.before(tenantId);
    const slot = randomUUID();
    for (let round = 0; round < TAKE_ROUNDS; round++) {
      if (await this.add(tenantId, slot)) return slot;
      const held = await this.held(tenantId);
      if (held === undefined) {
        if (await this.create(tenantId, slot)) return slot;
        continue;
      }
      const now = this.clock();
      const expired = Object.entries(held).filter(([, until]) => until <= now);
      // Room when read: the write lost a race with other takes and gives back; try again.
      if (Object.keys(held).length < this.cap) continue;
      if (expired.length === 0) return undefined;
      await this.clear(tenantId, expired.slice(0, CLEAR_AT_MOST));
    }
    return undefined;
  }

  /** Gives a slot back when its call ended, however it ended. */
  async give(tenantId: string, slot: string): Promise<void> {
    await this.db
      .send(
        new UpdateCommand({
          TableName: this.table,
          Key: { tenantId: itemKey(tenantId) },
          UpdateExpression: 'REMOVE calls.#slot',
          ConditionExpression: 'attribute_exists(calls)',
          ExpressionAttributeNames: { '#slot': slot },
        }),
      )
      .catch((err: unknown) => {
        if (!(err instanceof ConditionalCheckFailedException)) throw err;
      });
  }

  /**
   * Gives a slot back without making the caller wait (its call's result goes on to the model
   * while the write is on its way; a failure is dropped: the slot counts until its lease runs
   * out). `settled` waits for every one in flight, before an invocation ends.
   */
  giveBack(tenantId: string, slot: string): void {
    this.giving.start(tenantId, () => this.give(tenantId, slot));
  }

  /** Waits for every slot given back in the background so far. */
  settled(): Promise<void> {
    return this.giving.settled();
  }

  /** The live and expired slots (id → lease end), or undefined before the tenant's first call. */
  async held(tenantId: string): Promise<Record<string, number> | undefined> {
    const out = await this.db.send(new GetCommand({ TableName: this.table, Key: { tenantId: itemKey(tenantId) }, ConsistentRead: true }));
    return out.Item?.calls as Record<string, number> | undefined;
  }

  private async add(tenantId: string, slot: string): Promise<boolean> {
    return conditional(
      this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { tenantId: itemKey(tenantId) },
          UpdateExpression: 'SET calls.#slot = :until',
          ConditionExpression: 'attribute_exists(calls) AND size(calls) < :cap',
          ExpressionAttributeNames: { '#slot': slot },
          ExpressionAttributeValues: { ':until': this.clock() + RUNNER_SLOT_LEASE_MS, ':cap': this.cap },
        }),
      ),
    );
  }

  private async create(tenantId: string, slot: string): Promise<boolean> {
    return conditional(
      this.db.send(
        new PutCommand({
          TableName: this.table,
          Item: { tenantId: itemKey(tenantId), calls: { [slot]: this.clock() + RUNNER_SLOT_LEASE_MS } },
          ConditionExpression: 'attribute_not_exists(tenantId)',
        }),
      ),
    );
  }

  /** Removes slots whose lease ran out, each only if it still holds the lease end seen. */
  private async clear(tenantId: string, expired: [string, number][]): Promise<void> {
    const names = Object.fromEntries(expired.map(([slot], i) => [`#e${i}`, slot]));
    const values = Object.fromEntries(expired.map(([, until], i) => [`:e${i}`, until]));
    await conditional(
      this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { tenantId: itemKey(tenantId) },
          UpdateExpression: `REMOVE ${expired.map((_, i) => `calls.#e${i}`).join(', ')}`,
          ConditionExpression: expired.map((_, i) => `calls.#e${i} = :e${i}`).join(' AND '),
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        }),
      ),
    );
  }
}

/** The slots' item beside the tenant's storage item in the same table. */
const itemKey = (tenantId: string) => `runner-calls#${tenantId}`;

/** True when the write happened, false when its condition failed. */
async function conditional(write: Promise<unknown>): Promise<boolean> {
  try {
    await write;
    return true;
  } catch (err) {
    if (err instanceof ConditionalCheckFailedException) return false;
    throw err;
  }
}
