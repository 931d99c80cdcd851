import {
  CreateTableCommand,
  DescribeTableCommand,
  ResourceInUseException,
  ResourceNotFoundException,
  type DynamoDBClient,
  type AttributeDefinition,
} from '@aws-sdk/client-dynamodb';
import { tableSpecs, type KeyDef, type TableNames } from './tables.ts';

/** Creates any missing table (on-demand billing). Used by the local stack; in AWS the CDK app owns tables. */
export async function ensureTables(client: DynamoDBClient, names: TableNames): Promise<void> {
  for (const [TableName, spec] of tableSpecs(names)) {
    if (await tableExists(client, TableName)) continue;
    const keyDefs = [spec.partitionKey, spec.sortKey, ...(spec.indexes ?? []).flatMap((i) => [i.partitionKey, i.sortKey])];
    const attributes = new Map<string, AttributeDefinition>();
    for (const key of keyDefs) if (key) attributes.set(key.name, { AttributeName: key.name, AttributeType: key.type });
    try {
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
    } catch (err) {
      if (!(err instanceof ResourceInUseException)) throw err;
    }
  }
}

function keySchema(pk: KeyDef, sk?: KeyDef) {
  return [{ AttributeName: pk.name, KeyType: 'HASH' as const }, ...(sk ? [{ AttributeName: sk.name, KeyType: 'RANGE' as const }] : [])];
}

async function tableExists(client: DynamoDBClient, TableName: string): Promise<boolean> {
  try {
    await client.send(new DescribeTableCommand({ TableName }));
    return true;
  } catch (err) {
    if (err instanceof ResourceNotFoundException) return false;
    throw err;
  }
}
