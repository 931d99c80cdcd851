import { QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import { decodeCursor, encodeCursor, keyString } from './cursor.ts';

export interface TenantPage<T> {
  items: T[];
  nextCursor?: string;
}

/**
 * One page of a tenant's items through a table's `byTenant` index, newest first, with an
 * opaque cursor (tables.ts gives sessions and schedules that index).
 */
export async function queryByTenant<T>(
  db: DynamoDBDocumentClient,
  table: string,
  /** The table's partition key (`sessionId`, `scheduleId`): with the index keys, what a cursor holds. */
  idAttribute: string,
  tenantId: string,
  opts: { limit: number; cursor?: string },
): Promise<TenantPage<T>> {
  const shape = z.strictObject({ tenantId: keyString, createdAt: keyString, [idAttribute]: keyString });
  const out = await db.send(
    new QueryCommand({
      TableName: table,
      IndexName: 'byTenant',
      KeyConditionExpression: 'tenantId = :t',
      ExpressionAttributeValues: { ':t': tenantId },
      ScanIndexForward: false,
      Limit: opts.limit,
      ExclusiveStartKey: opts.cursor ? decodeCursor(opts.cursor, shape, { tenantId }) : undefined,
    }),
  );
  return { items: (out.Items ?? []) as T[], nextCursor: out.LastEvaluatedKey ? encodeCursor(out.LastEvaluatedKey) : undefined };
}
