import {
  BatchWriteItemCommand,
  CreateTableCommand,
  DeleteTableCommand,
  DescribeTableCommand,
  ResourceNotFoundException,
  ScanCommand,
  type AttributeDefinition,
  type AttributeValue,
  type DynamoDBClient,
  type TableDescription,
} from '@aws-sdk/client-dynamodb';
import type { KeyDef, TableSpec } from './tables.ts';

/**
 * Gives an existing local table the indexes its spec gained since it was created (e.g. the
 * sessions' `byActivity`), keeping every item. The local DynamoDB stand-in (dynalite) accepts
 * UpdateTable's index creation but ignores it, so the table is rebuilt: its items are copied into
 * `<name>.reindex` (created with the new indexes), the table is created again with them, and the
 * items are copied back. Each step can be cut short by a crash: the next start sees which tables
 * exist and goes on from there, and the original is deleted only once its copy is complete.
 * In AWS the CDK app owns the tables and DynamoDB builds a new index in place.
 */
export async function reindexTable(client: DynamoDBClient, name: string, spec: TableSpec): Promise<void> {
  const copy = `${name}.reindex`;
  const [original, copied] = [await describe(client, name), await describe(client, copy)];
  if (original && hasIndexes(original, spec)) {
    // Cut short while copying back: copy again (a put of the same item is harmless), then finish.
    if (copied) await finish(client, copy, name);
    return;
  }
  if (original) {
    // The copy of an earlier, interrupted attempt may be partial: start it again.
    if (copied) await drop(client, copy);
    await createTable(client, copy, spec);
    await copyItems(client, name, copy);
    await drop(client, name);
  }
  await createTable(client, name, spec);
  await finish(client, copy, name);
}

async function finish(client: DynamoDBClient, copy: string, name: string): Promise<void> {
  await copyItems(client, copy, name);
  await drop(client, copy);
}

/** Whether the table has every index its spec names. */
export function hasIndexes(table: TableDescription, spec: TableSpec): boolean {
  const have = new Set((table.GlobalSecondaryIndexes ?? []).map((i) => i.IndexName));
  return (spec.indexes ?? []).every((index) => have.has(index.name));
}

export async function describe(client: DynamoDBClient, TableName: string): Promise<TableDescription | undefined> {
  try {
    return (await client.send(new DescribeTableCommand({ TableName }))).Table;
  } catch (err) {
    if (err instanceof ResourceNotFoundException) return undefined;
    throw err;
  }
}

export async function createTable(client: DynamoDBClient, TableName: string, spec: TableSpec): Promise<void> {
  const keyDefs = [spec.partitionKey, spec.sortKey, ...(spec.indexes ?? []).flatMap((i) => [i.partitionKey, i.sortKey])];
  const attributes = new Map<string, AttributeDefinition>();
  for (const key of keyDefs) if (key) attributes.set(key.name, { AttributeName: key.name, AttributeType: key.type });
  await client.send(
    new CreateTableCommand({
      TableName,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [...attributes.values()],
      KeySchema: keySchema(spec.partitionKey, spec.sortKey),
      GlobalSecondaryIndexes: spec.indexes?.map((index) => ({
        IndexName: index.name,
        KeySchema: keySchema(index.partitionKey, index.sortKey),
        Projection: { ProjectionType: 'ALL' },
      })),
    }),
  );
  // A table takes writes once ACTIVE (the stand-in gets there within milliseconds; a write before is a ResourceInUseException).
  await waitUntil(client, TableName, (table) => table?.TableStatus === 'ACTIVE', 'become ACTIVE');
}

/** Polls the table's description until `done` holds (creating and deleting both finish asynchronously). */
async function waitUntil(client: DynamoDBClient, TableName: string, done: (table: TableDescription | undefined) => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!done(await describe(client, TableName))) {
    if (Date.now() > deadline) throw new Error(`Table ${TableName} did not ${what} within 30 s.`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function keySchema(pk: KeyDef, sk?: KeyDef) {
  return [{ AttributeName: pk.name, KeyType: 'HASH' as const }, ...(sk ? [{ AttributeName: sk.name, KeyType: 'RANGE' as const }] : [])];
}

async function drop(client: DynamoDBClient, TableName: string): Promise<void> {
  await client.send(new DeleteTableCommand({ TableName }));
  // Its name is free again only once it is gone (DELETING is a ResourceInUseException for a new CreateTable).
  await waitUntil(client, TableName, (table) => table === undefined, 'go away');
}

/** Every item of `from` into `to`, 25 per batch, retrying what a batch leaves unprocessed. */
async function copyItems(client: DynamoDBClient, from: string, to: string): Promise<void> {
  let start: Record<string, AttributeValue> | undefined;
  do {
    const page = await client.send(new ScanCommand({ TableName: from, ExclusiveStartKey: start }));
    const items = page.Items ?? [];
    for (let i = 0; i < items.length; i += 25) {
      let pending: Record<string, { PutRequest: { Item: Record<string, AttributeValue> } }[]> | undefined = {
        [to]: items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } })),
      };
      while (pending && Object.keys(pending).length > 0) {
        const out = await client.send(new BatchWriteItemCommand({ RequestItems: pending }));
        pending = out.UnprocessedItems as typeof pending;
      }
    }
    start = page.LastEvaluatedKey;
  } while (start);
}
