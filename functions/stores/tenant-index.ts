import { QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import { decodeCursor, encodeCursor, keyString } from './cursor.ts';

export interface TenantPage<T> {
  items: T[];
  nextCursor?: string;
}

/** A tenant index of tables.ts and the attribute it sorts by. */
export interface TenantIndex {
  name: 'byTenant' | 'byActivity';
  sortKey: 'createdAt' | 'updatedAt';
}

export const BY_CREATION: TenantIndex = { name: 'byTenant', sortKey: 'createdAt' };
export const BY_ACTIVITY: TenantIndex = { name: 'byActivity', sortKey: 'updatedAt' };

/**
 * One page of a tenant's items through one of a table's tenant indexes (default `byTenant`, by
 * creation), newest first, with an opaque cursor that only that index's listing accepts
 * (tables.ts gives sessions, schedules and GitHub runs `byTenant`, sessions also `byActivity`).
 */
export async function queryByTenant<T>(
  db: DynamoDBDocumentClient,
  table: string,
  /** The table's partition key (`sessionId`, `scheduleId`): with the index keys, what a cursor holds. */
  idAttribute: string,
  tenantId: string,
  opts: { limit: number; cursor?: string; index?: TenantIndex },
): Promise<TenantPage<T>> {
  const index = opts.index ?? BY_CREATION;
  const shape = z.strictObject({ tenantId: keyString, [index.sortKey]: keyString, [idAttribute]: keyString });
  const out = await db.send(
    new QueryCommand({
      TableName: table,
      IndexName: index.name,
      KeyConditionExpression: 'tenantId = :t',
      ExpressionAttributeValues: { ':t': tenantId },
      ScanIndexForward: false,
      Limit: opts.limit,
      ExclusiveStartKey: opts.cursor ? decodeCursor(opts.cursor, shape, { tenantId }) : undefined,
    }),
  );
  return { items: (out.Items ?? []) as T[], nextCursor: out.LastEvaluatedKey ? encodeCursor(out.LastEvaluatedKey) : undefined };
}

/** Every one of a tenant's items through a tenant index, newest first, a page of 100 at a time. */
export async function* eachOfTenant<T>(
  db: DynamoDBDocumentClient,
  table: string,
  idAttribute: string,
  tenantId: string,
  index?: TenantIndex,
): AsyncGenerator<T> {
  let cursor: string | undefined;
  do {
    const page = await queryByTenant<T>(db, table, idAttribute, tenantId, { limit: 100, cursor, ...(index ? { index } : {}) });
    yield* page.items;
    cursor = page.nextCursor;
  } while (cursor);
}
