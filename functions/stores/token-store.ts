import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, ScanCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import { decodeCursor, encodeCursor } from './cursor.ts';

/** A tenant token as stored: its hash and who it is for; the token itself is never kept. */
export interface TokenRecord {
  /** Public id, the token's first part (`stk_` + 12 hex): names the token without revealing it. */
  tokenId: string;
  /** SHA-256 of the whole token, hex. */
  tokenHash: string;
  tenantId: string;
  label: string;
  createdAt: string;
  /** Updated at most once an hour per token (functions/api/token-auth.ts). */
  lastUsedAt?: string;
  revokedAt?: string;
}

const cursorShape = z.strictObject({ tokenId: z.string().regex(/^stk_[0-9a-f]{12}$/) });

/** Tenant tokens in DynamoDB. Listing is a Scan: an admin operation over a small table. */
export class TokenStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  /** Stores a new token; false when the id is taken (the caller draws another). */
  async create(record: TokenRecord): Promise<boolean> {
    try {
      await this.db.send(new PutCommand({ TableName: this.table, Item: record, ConditionExpression: 'attribute_not_exists(tokenId)' }));
      return true;
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return false;
      throw err;
    }
  }

  async get(tokenId: string): Promise<TokenRecord | undefined> {
    const out = await this.db.send(new GetCommand({ TableName: this.table, Key: { tokenId }, ConsistentRead: true }));
    return out.Item as TokenRecord | undefined;
  }

  async list(opts: { limit: number; cursor?: string }): Promise<{ tokens: TokenRecord[]; nextCursor: string | null }> {
    const out = await this.db.send(
      new ScanCommand({
        TableName: this.table,
        Limit: opts.limit,
        ...(opts.cursor ? { ExclusiveStartKey: decodeCursor(opts.cursor, cursorShape, {}) } : {}),
      }),
    );
    const tokens = (out.Items ?? []) as TokenRecord[];
    return { tokens, nextCursor: out.LastEvaluatedKey ? encodeCursor(out.LastEvaluatedKey) : null };
  }

  /** Marks a token revoked (the first time only); the record stays for the audit trail. Undefined when unknown. */
  async revoke(tokenId: string, at: string): Promise<TokenRecord | undefined> {
    try {
      const out = await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { tokenId },
          UpdateExpression: 'SET revokedAt = :at',
          ConditionExpression: 'attribute_exists(tokenId) AND attribute_not_exists(revokedAt)',
          ExpressionAttributeValues: { ':at': at },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return out.Attributes as TokenRecord;
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return this.get(tokenId);
      throw err;
    }
  }

  async touch(tokenId: string, at: string): Promise<void> {
    await this.db.send(
      new UpdateCommand({
        TableName: this.table,
        Key: { tokenId },
        UpdateExpression: 'SET lastUsedAt = :at',
        ConditionExpression: 'attribute_exists(tokenId)',
        ExpressionAttributeValues: { ':at': at },
      }),
    );
  }
}
