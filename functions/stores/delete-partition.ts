import { BatchWriteCommand, QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/** BatchWriteItem takes at most 25 requests. */
const BATCH = 25;

/**
 * Deletes every item of one partition (a session's messages, events or approvals), a page of
 * keys at a time, retrying what DynamoDB hands back unprocessed. Returns how many were deleted.
 */
export async function deletePartition(db: DynamoDBDocumentClient, table: string, key: { partition: string; sort: string }, value: string): Promise<number> {
  let deleted = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const out = await db.send(
      new QueryCommand({
        TableName: table,
        KeyConditionExpression: '#pk = :pk',
        ProjectionExpression: '#pk, #sk',
        ExpressionAttributeNames: { '#pk': key.partition, '#sk': key.sort },
        ExpressionAttributeValues: { ':pk': value },
        ExclusiveStartKey: start,
      }),
    );
    const keys = (out.Items ?? []).map((item) => ({ [key.partition]: item[key.partition], [key.sort]: item[key.sort] }));
    for (let i = 0; i < keys.length; i += BATCH) {
      let requests: unknown[] = keys.slice(i, i + BATCH).map((Key) => ({ DeleteRequest: { Key } }));
      for (let attempt = 0; requests.length > 0; attempt++) {
        if (attempt > 0) await new Promise((r) => setTimeout(r, Math.min(2_000, 50 * 2 ** attempt)));
        const written = await db.send(new BatchWriteCommand({ RequestItems: { [table]: requests as never } }));
        requests = written.UnprocessedItems?.[table] ?? [];
      }
    }
    deleted += keys.length;
    start = out.LastEvaluatedKey;
  } while (start);
  return deleted;
}
