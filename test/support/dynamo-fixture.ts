import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll } from 'vitest';
import { ensureTables } from '../../functions/stores/ensure-tables.ts';
import { tableNames, type TableNames } from '../../functions/stores/tables.ts';
import { startDynamoServer, type EmbeddedServer } from '../../local/dynamo-server.ts';
import { LOCAL_S3_CREDENTIALS } from '../../local/s3-server.ts';
import { makeTempDir } from './temp-dir.ts';

/**
 * The DynamoDB-protocol server with the product's tables, for a describe block: `db` (the
 * document client the stores take) is set before the first test; the server, the client and the
 * data folder go after the last.
 */
export function useDynamoTables(): { readonly db: DynamoDBDocumentClient; readonly tables: TableNames } {
  const tables = tableNames('test');
  const tmp = makeTempDir();
  let server: EmbeddedServer;
  let client: DynamoDBClient;
  const fx = { db: undefined as unknown as DynamoDBDocumentClient, tables };
  beforeAll(async () => {
    server = await startDynamoServer({ dir: `${tmp.dir}/dynamodb` });
    client = new DynamoDBClient({ region: 'us-east-1', endpoint: server.url, credentials: LOCAL_S3_CREDENTIALS });
    await ensureTables(client, tables);
    fx.db = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
  });
  afterAll(async () => {
    client.destroy();
    await server.close();
    tmp.cleanup();
  });
  return fx;
}
