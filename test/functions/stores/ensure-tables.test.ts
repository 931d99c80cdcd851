import { DynamoDBClient, PutItemCommand, QueryCommand, ScanCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureTables } from '../../../functions/stores/ensure-tables.ts';
import { createTable, describe as describeTable } from '../../../functions/stores/table-reindex.ts';
import { TABLES, tableNames, type TableSpec } from '../../../functions/stores/tables.ts';
import { startDynamoServer, type EmbeddedServer } from '../../../local/dynamo-server.ts';
import { LOCAL_CREDENTIALS } from '../../../local/local-credentials.ts';
import { makeTempDir } from '../../support/temp-dir.ts';

/** The sessions table as versions before `byActivity` created it. */
const SESSIONS_BEFORE: TableSpec = { ...TABLES.sessions, indexes: TABLES.sessions.indexes.filter((i) => i.name === 'byTenant') };

describe('ensureTables on a data folder made by an earlier version', () => {
  const tmp = makeTempDir();
  let server: EmbeddedServer;
  let client: DynamoDBClient;
  beforeAll(async () => {
    server = await startDynamoServer({ dir: `${tmp.dir}/dynamodb` });
    client = new DynamoDBClient({ region: 'us-east-1', endpoint: server.url, credentials: LOCAL_CREDENTIALS });
  });
  afterAll(async () => {
    client.destroy();
    await server.close();
    tmp.cleanup();
  });

  const seed = async (table: string, count: number) => {
    await createTable(client, table, SESSIONS_BEFORE);
    for (let i = 0; i < count; i++) {
      const at = new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString();
      // Created in one order, active in the reverse one; each with a body that must survive.
      const active = new Date(Date.UTC(2026, 0, 2, 0, 0, count - i)).toISOString();
      await client.send(
        new PutItemCommand({
          TableName: table,
          Item: { sessionId: { S: `ses_${i}` }, tenantId: { S: 't' }, createdAt: { S: at }, updatedAt: { S: active }, title: { S: `title ${i}` } },
        }),
      );
    }
  };
  const byActivity = async (table: string) =>
    (
      await client.send(
        new QueryCommand({
          TableName: table,
          IndexName: 'byActivity',
          KeyConditionExpression: 'tenantId = :t',
          ExpressionAttributeValues: { ':t': { S: 't' } },
          ScanIndexForward: false,
        }),
      )
    ).Items!.map((item) => item.sessionId!.S);
  const titles = async (table: string) => (await client.send(new ScanCommand({ TableName: table }))).Items!.map((item) => item.title!.S).sort();

  it("adds the sessions table's byActivity index, keeping every item, and later starts leave it alone", async () => {
    const names = tableNames('old');
    await seed(names.sessions, 30);
    const before = await titles(names.sessions);
    await ensureTables(client, names);
    expect((await describeTable(client, names.sessions))!.GlobalSecondaryIndexes!.map((i) => i.IndexName).sort()).toEqual(['byActivity', 'byTenant']);
    expect(await titles(names.sessions)).toEqual(before);
    expect(await byActivity(names.sessions)).toEqual(Array.from({ length: 30 }, (_, i) => `ses_${i}`));
    expect(await describeTable(client, `${names.sessions}.reindex`)).toBeUndefined();
    await ensureTables(client, names);
    expect(await titles(names.sessions)).toEqual(before);
  });

  it('finishes a rebuild a crash cut short after the original table was deleted, from the complete copy', async () => {
    const names = tableNames('crashed');
    // What a crash between "delete the original" and "create it again" leaves: only the copy.
    await seed(`${names.sessions}.reindex`, 3);
    await ensureTables(client, names);
    expect(await byActivity(names.sessions)).toEqual(['ses_0', 'ses_1', 'ses_2']);
    expect(await describeTable(client, `${names.sessions}.reindex`)).toBeUndefined();
  });
});
