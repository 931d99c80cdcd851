import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeMessageItem } from '../../functions/stores/message-item.ts';
import { SPILL_THRESHOLD_BYTES, type StoredMessage } from '../../functions/stores/message-store.ts';
import { startLocalStack, type LocalStack } from '../../local/stack.ts';
import { makeTempDir } from '../support/temp-dir.ts';

describe('messages too big for a DynamoDB item', () => {
  const tmp = makeTempDir();
  let stack: LocalStack;
  beforeAll(async () => {
    stack = await startLocalStack({ dataDir: tmp.dir });
  });
  afterAll(async () => {
    await stack.stop();
    tmp.cleanup();
  });

  it('spill their payload to S3 behind a pointer and load back whole', async () => {
    const big = 'z'.repeat(600_000);
    const message: StoredMessage = {
      sessionId: 'ses_spill',
      seq: 0,
      uuid: 'msg_big',
      turnId: 'turn_1',
      kind: 'tool_result',
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'toolu_big', content: big }],
      createdAt: '2026-01-01T00:00:00.000Z',
    };
    await stack.deps.messages.append(message);
    await stack.deps.messages.append({ ...message, seq: 1, uuid: 'msg_small', content: [{ type: 'text', text: 'small' }], kind: 'prompt' });

    const db = DynamoDBDocumentClient.from(
      new DynamoDBClient({ region: 'us-east-1', endpoint: stack.urls.dynamodb, credentials: stack.deps.config.localCredentials }),
    );
    const item = (await db.send(new GetCommand({ TableName: stack.deps.config.tables.messages, Key: { sessionId: 'ses_spill', seq: 0 } }))).Item!;
    const stored = decodeMessageItem<StoredMessage>(item);
    expect(stored.content).toEqual([]);
    expect(stored.spill).toEqual({ key: 'spill/ses_spill/messages/0000000000-msg_big.json', bytes: expect.any(Number) });
    expect(stored.spill!.bytes).toBeGreaterThan(SPILL_THRESHOLD_BYTES);
    expect(Buffer.byteLength(item.body)).toBeLessThan(1_000);

    const loaded = await stack.deps.messages.loadFrom('ses_spill', 0);
    expect(loaded.map((m) => m.seq)).toEqual([0, 1]);
    expect(loaded[0]!.content).toEqual(message.content);
    expect(loaded[1]!.spill).toBeUndefined();
    // A replayed write is refused by the create-only item; the S3 payload is left as it was.
    await expect(stack.deps.messages.append(message)).rejects.toThrow();
  });
});
