import { QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { decodeCursor, encodeCursor } from './session-store.ts';

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
  tenantId: string,
  opts: { limit: number; cursor?: string },
): Promise<TenantPage<T>> {
  const out = await db.send(
    new QueryCommand({
      TableName: table,
      IndexName: 'byTenant',
      KeyConditionExpression: 'tenantId = :t',
      ExpressionAttributeValues: { ':t': tenantId },
      ScanIndexForward: false,
      Limit: opts.limit,
      ExclusiveStartKey: opts.cursor ? decodeCursor(opts.cursor) : undefined,
    }),
  );
  return { items: (out.Items ?? []) as T[], nextCursor: out.LastEvaluatedKey ? encodeCursor(out.LastEvaluatedKey) : undefined };
}
