import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { TTL_ATTRIBUTE } from './tables.ts';

/** How long a key and its first response are kept (the TTL deletes them some time after). */
export const IDEMPOTENCY_RETENTION_SECONDS = 24 * 3600;

/**
 * A claim nobody completed for this long belongs to a process that died mid-request (the
 * longest request, a JSON turn, lasts at most one Lambda invocation: 15 minutes); it may be taken.
 */
export const PENDING_CLAIM_STALE_MS = 15 * 60_000;

/** The first response, as replayed. A stream is not stored: `followUrl` says where its events are. */
export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  /** The body as text, or where it was spilled to S3 when too large for the item. */
  body?: string;
  bodyKey?: string;
  followUrl?: string;
}

export interface IdempotencyRecord {
  scopedKey: string;
  /** SHA-256 of method, path and body: the same key with another request is refused. */
  requestHash: string;
  state: 'pending' | 'done';
  /** Who claimed it (one request), so only that request completes or releases the claim. */
  claimId: string;
  claimedAt: number;
  response?: StoredResponse;
}

/** Idempotency keys in DynamoDB: a conditional write claims a key; the first response is stored on it. */
export class IdempotencyStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  /**
   * Claims the key for this request if it is new (or expired, or a stale claim). Returns the
   * record that stands in the way otherwise.
   */
  async claim(record: Omit<IdempotencyRecord, 'state' | 'response'>): Promise<{ claimed: true } | { claimed: false; existing: IdempotencyRecord | undefined }> {
    const nowSeconds = Math.floor(record.claimedAt / 1000);
    try {
      await this.db.send(
        new PutCommand({
          TableName: this.table,
          Item: { ...record, state: 'pending', [TTL_ATTRIBUTE]: nowSeconds + IDEMPOTENCY_RETENTION_SECONDS },
          ConditionExpression: 'attribute_not_exists(scopedKey) OR #ttl < :now OR (#state = :pending AND claimedAt < :staleBefore)',
          ExpressionAttributeNames: { '#ttl': TTL_ATTRIBUTE, '#state': 'state' },
          ExpressionAttributeValues: { ':now': nowSeconds, ':pending': 'pending', ':staleBefore': record.claimedAt - PENDING_CLAIM_STALE_MS },
        }),
      );
      return { claimed: true };
    } catch (err) {
      if (!(err instanceof ConditionalCheckFailedException)) throw err;
      return { claimed: false, existing: await this.get(record.scopedKey) };
    }
  }

  async get(scopedKey: string): Promise<IdempotencyRecord | undefined> {
    const out = await this.db.send(new GetCommand({ TableName: this.table, Key: { scopedKey }, ConsistentRead: true }));
    return out.Item as IdempotencyRecord | undefined;
  }

  /** Stores the first response on the claim. */
  async complete(scopedKey: string, claimId: string, response: StoredResponse): Promise<void> {
    await this.db.send(
      new UpdateCommand({
        TableName: this.table,
        Key: { scopedKey },
        UpdateExpression: 'SET #state = :done, #response = :response',
        ConditionExpression: 'claimId = :claimId',
        ExpressionAttributeNames: { '#state': 'state', '#response': 'response' },
        ExpressionAttributeValues: { ':done': 'done', ':response': response, ':claimId': claimId },
      }),
    );
  }

  /** Gives the key up (the request failed in a way a retry may fix). */
  async release(scopedKey: string, claimId: string): Promise<void> {
    try {
      await this.db.send(
        new DeleteCommand({
          TableName: this.table,
          Key: { scopedKey },
          ConditionExpression: 'claimId = :claimId AND #state = :pending',
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: { ':claimId': claimId, ':pending': 'pending' },
        }),
      );
    } catch (err) {
      if (!(err instanceof ConditionalCheckFailedException)) throw err;
    }
  }
}
