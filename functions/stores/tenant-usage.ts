import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { LimitError } from '../shared/errors.ts';
import { WritesBehind } from '../shared/writes-behind.ts';

/** The setting that sets the quota, named in every refusal. */
export const STORAGE_QUOTA_SETTING = 'STRATUS_TENANT_STORAGE_QUOTA_BYTES';

/** A tenant's stored bytes would pass its quota; nothing was stored. */
export class StorageQuotaError extends LimitError {
  constructor(message: string) {
    super(message, 'storage_quota');
  }
}

/**
 * The bytes each tenant keeps in S3, against the storage quota. What counts: every byte a
 * workspace publish put into S3 (deltas, blobs, snapshots: the runner's `bytesUploaded`) and
 * archive uploads while they wait for their import. What does not: persisted tool results and
 * spilled message payloads (bounded per message, removed with the session), task output
 * mirrors, exports (short-lived), DynamoDB items.
 *
 * Two counters move together, always by atomic ADDs, never read-modify-write: `storedBytes` on
 * the tenant's item (tenantUsage table) and on the session's record, so deleting a session
 * gives back exactly what it added. A session marked deleted takes no more charges (its purge
 * takes its counter in one conditional update and subtracts it from the tenant's).
 *
 * The quota itself is a conditional ADD: `storedBytes <= quota - n`, so of concurrent
 * reservations that together pass it some are refused; none can be let through by a stale read.
 */
export class TenantUsageStore {
  /** Counts started by addBehind and not yet written, per tenant. */
  private readonly counting = new WritesBehind();

  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tables: { usage: string; sessions: string },
    readonly quotaBytes: number,
  ) {}

  async storedBytes(tenantId: string): Promise<number> {
    await this.counting.before(tenantId);
    const out = await this.db.send(new GetCommand({ TableName: this.tables.usage, Key: { tenantId }, ConsistentRead: true }));
    return (out.Item?.storedBytes as number | undefined) ?? 0;
  }

  /**
   * Counts `bytes` the session is about to store (an upload of known size) if the tenant's total
   * stays within the quota; otherwise StorageQuotaError and nothing changes.
   */
  async reserve(tenantId: string, sessionId: string, bytes: number): Promise<void> {
    if (bytes > this.quotaBytes) throw new StorageQuotaError(await this.refusal(tenantId, bytes));
    try {
      await this.addToTenant(tenantId, bytes, this.quotaBytes - bytes);
    } catch (err) {
      if (!(err instanceof ConditionalCheckFailedException)) throw err;
      throw new StorageQuotaError(await this.refusal(tenantId, bytes));
    }
    if (!(await this.addToSession(sessionId, bytes))) await this.addToTenant(tenantId, -bytes);
  }

  /**
   * Refuses a write that may store more (a tool call, an import) once the tenant is at its quota.
   * `ownReservation` is what the write's own input already holds against the quota (an import's
   * staged archive, reserved before it was stored): it does not make the tenant "at quota" for
   * that write, so an archive that exactly fills the quota can still be imported.
   */
  async assertRoom(tenantId: string, ownReservation = 0): Promise<void> {
    if ((await this.storedBytes(tenantId)) - ownReservation >= this.quotaBytes) throw new StorageQuotaError(await this.refusal(tenantId, 0));
  }

  /**
   * Counts bytes already stored (a publish; negative: an upload removed). Unconditional for the
   * tenant (they are in S3 whatever the quota says), skipped for a session already deleted, whose
   * purge removes them and has taken its counter.
   */
  async add(tenantId: string, sessionId: string, bytes: number): Promise<void> {
    if (bytes === 0) return;
    if (await this.addToSession(sessionId, bytes)) await this.addToTenant(tenantId, bytes);
  }

  /**
   * `add` without making the caller wait: a tool's result goes on to the model while its publish
   * is counted. The next read of this tenant's bytes in this process (assertRoom included) waits for it, `settled` before
   * an invocation ends; a failure reaches `onError` (the bytes are stored, the count misses them).
   */
  addBehind(tenantId: string, sessionId: string, bytes: number, onError: (err: unknown) => void): void {
    if (bytes === 0) return;
    this.counting.start(tenantId, () => this.add(tenantId, sessionId, bytes), onError);
  }

  /** Waits for every count addBehind started so far. */
  settled(): Promise<void> {
    return this.counting.settled();
  }

  /** A deleted session's purge: takes its counter (zeroing it) and gives it back to the tenant. */
  async releaseSession(tenantId: string, sessionId: string): Promise<number> {
    const out = await this.db
      .send(
        new UpdateCommand({
          TableName: this.tables.sessions,
          Key: { sessionId },
          UpdateExpression: 'SET storedBytes = :zero',
          ConditionExpression: 'attribute_exists(sessionId)',
          ExpressionAttributeValues: { ':zero': 0 },
          ReturnValues: 'UPDATED_OLD',
        }),
      )
      .catch((err: unknown) => {
        if (err instanceof ConditionalCheckFailedException) return { Attributes: undefined };
        throw err;
      });
    const released = (out.Attributes?.storedBytes as number | undefined) ?? 0;
    if (released !== 0) await this.addToTenant(tenantId, -released);
    return released;
  }

  private async refusal(tenantId: string, bytes: number): Promise<string> {
    const stored = await this.storedBytes(tenantId);
    const wants = bytes > 0 ? `storing ${bytes} more bytes would pass` : 'has reached';
    return `Tenant ${tenantId} stores ${stored} bytes and ${wants} its storage quota of ${this.quotaBytes} bytes (${STORAGE_QUOTA_SETTING}). Delete sessions you no longer need, or ask for a larger quota; nothing was stored.`;
  }

  private async addToTenant(tenantId: string, bytes: number, atMost?: number): Promise<void> {
    await this.db.send(
      new UpdateCommand({
        TableName: this.tables.usage,
        Key: { tenantId },
        UpdateExpression: 'ADD storedBytes :n',
        ...(atMost === undefined ? {} : { ConditionExpression: 'attribute_not_exists(storedBytes) OR storedBytes <= :atMost' }),
        ExpressionAttributeValues: { ':n': bytes, ...(atMost === undefined ? {} : { ':atMost': atMost }) },
      }),
    );
  }

  /** False when the session is gone or deleted (its purge accounts for it). */
  private async addToSession(sessionId: string, bytes: number): Promise<boolean> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.tables.sessions,
          Key: { sessionId },
          UpdateExpression: 'ADD storedBytes :n',
          ConditionExpression: 'attribute_exists(sessionId) AND attribute_not_exists(deletedAt)',
          ExpressionAttributeValues: { ':n': bytes },
        }),
      );
      return true;
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return false;
      throw err;
    }
  }
}
