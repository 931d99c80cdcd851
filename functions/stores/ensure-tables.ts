import { ResourceInUseException, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { tableSpecs, type TableNames } from './tables.ts';
import { createTable, describe, hasIndexes, reindexTable } from './table-reindex.ts';

/**
 * Creates any missing table (on-demand billing), and gives a table made by an earlier version the
 * indexes added since (reindexTable). Used by the local stack; in AWS the CDK app owns tables.
 */
export async function ensureTables(client: DynamoDBClient, names: TableNames): Promise<void> {
  for (const [TableName, spec] of tableSpecs(names)) {
    const table = await describe(client, TableName);
    const interrupted = await describe(client, `${TableName}.reindex`);
    if (table && hasIndexes(table, spec) && !interrupted) continue;
    if (table || interrupted) {
      await reindexTable(client, TableName, spec);
      continue;
    }
    try {
      await createTable(client, TableName, spec);
    } catch (err) {
      if (!(err instanceof ResourceInUseException)) throw err;
    }
  }
}
