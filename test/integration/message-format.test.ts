import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { spilledMessageKey } from '../../functions/stores/bucket-layout.ts';
import type { StoredMessage } from '../../functions/stores/message-store.ts';
import { dateBlock, text, unscripted, useLocalStack } from '../support/stack-fixture.ts';

/**
 * Sessions written before messages were stored as one JSON `body` attribute: every field its own
 * attribute, content as nested lists and maps, big payloads spilled to S3 the same way. They
 * must load and continue unchanged; new messages go in the current format beside them.
 */
describe('message items written in the legacy format (nested attributes)', () => {
  const env = useLocalStack({ brain: unscripted });

  it('load as they were written, and a turn continues the session from them', async () => {
    const { stack, api } = env;
    const db = DynamoDBDocumentClient.from(
      new DynamoDBClient({ region: 'us-east-1', endpoint: stack.urls.dynamodb, credentials: stack.deps.config.localCredentials }),
      { marshallOptions: { removeUndefinedValues: true } },
    );
    const table = stack.deps.config.tables.messages;
    const sessionId = await api.createSession();
    const base = { sessionId, turnId: 'turn_legacy', createdAt: '2026-01-01T00:00:00.000Z' };
    const bigOutput = 'legacy output line\n'.repeat(25_000);
    const legacy: StoredMessage[] = [
      { ...base, seq: 0, uuid: 'msg_l0', kind: 'prompt', role: 'user', content: [{ type: 'text', text: 'What is in the log?' }] },
      {
        ...base,
        seq: 1,
        uuid: 'msg_l1',
        kind: 'assistant',
        role: 'assistant',
        model: 'claude-old',
        stopReason: 'tool_use',
        content: [{ type: 'tool_use', id: 'toolu_legacy', name: 'Bash', input: { command: 'cat log.txt', description: 'read it' } }],
        usage: { inputTokens: 120, outputTokens: 30, cacheReadInputTokens: 7 },
      },
      // Spilled as the legacy append did it: the payload in S3, the item with `content: []` and a pointer.
      {
        ...base,
        seq: 2,
        uuid: 'msg_l2',
        kind: 'tool_result',
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 'toolu_legacy', content: bigOutput }],
      },
      {
        ...base,
        seq: 3,
        uuid: 'msg_l3',
        kind: 'assistant',
        role: 'assistant',
        model: 'claude-old',
        stopReason: 'end_turn',
        content: [{ type: 'text', text: 'It is a long log.' }],
        usage: { inputTokens: 150, outputTokens: 12 },
        decisions: { seen: [], replaced: [{ toolUseId: 'toolu_legacy', replacement: '[the log, replaced in an earlier release]' }] },
      },
    ];
    const loadedBack: StoredMessage[] = [];
    for (const message of legacy) {
      let item: StoredMessage = message;
      if (message.seq === 2) {
        const key = spilledMessageKey(sessionId, 2, message.uuid);
        const payload = JSON.stringify({ content: message.content });
        await stack.deps.blobs.putIfAbsent(key, payload, 'application/json');
        item = { ...message, content: [], spill: { key, bytes: Buffer.byteLength(payload) } };
      }
      // A reload brings the payload back and keeps the pointer, as it always has.
      loadedBack.push({ ...item, content: message.content });
      await db.send(new PutCommand({ TableName: table, Item: item, ConditionExpression: 'attribute_not_exists(seq)' }));
    }
    const owner = `test/${sessionId}`;
    await stack.deps.sessions.acquireLease(sessionId, { owner, turnId: 'turn_legacy', expiresAt: Date.now() + 60_000 }, Date.now());
    await stack.deps.sessions.releaseLease(sessionId, owner, { status: 'idle', messageCount: legacy.length });

    // The store reads them back exactly as written, the spilled payload included.
    expect(await stack.deps.messages.loadFrom(sessionId, 0)).toEqual(loadedBack);

    // A turn reloads them: the model sees the old conversation, with the old replacement applied.
    const before = stack.model!.requests.length;
    stack.model!.enqueue(text('Still a long log.'));
    const res = await api.turn(sessionId, 'And now?');
    expect(res.json).toMatchObject({ stopReason: 'end_turn', error: null });
    const request = stack.model!.requests.slice(before);
    expect(request).toHaveLength(1);
    expect(request[0]!.body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: dateBlock() },
          { type: 'text', text: 'What is in the log?' },
        ],
      },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_legacy', name: 'Bash', input: { command: 'cat log.txt', description: 'read it' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_legacy', content: '[the log, replaced in an earlier release]' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'It is a long log.' }] },
      { role: 'user', content: [expect.objectContaining({ type: 'text', text: 'And now?' })] },
    ]);

    // Old and new items side by side in one log: the API lists both the same way.
    const listed = await api.messages(sessionId);
    expect(listed.map((m: { seq: number; kind: string; id: string }) => [m.seq, m.kind, m.id])).toEqual([
      [0, 'prompt', 'msg_l0'],
      [1, 'assistant', 'msg_l1'],
      [2, 'tool_result', 'msg_l2'],
      [3, 'assistant', 'msg_l3'],
      [4, 'prompt', expect.any(String)],
      [5, 'assistant', expect.any(String)],
    ]);
    expect(listed[2].content).toEqual(legacy[2]!.content);
    expect(listed[1]).toMatchObject({ turnId: 'turn_legacy', stopReason: 'tool_use', usage: legacy[1]!.usage, createdAt: base.createdAt });
    expect(listed[5].content).toEqual([{ type: 'text', text: 'Still a long log.' }]);

    // The new ones are stored in the current format: the keys and one JSON body, nothing nested.
    const legacyItem = (await db.send(new GetCommand({ TableName: table, Key: { sessionId, seq: 1 } }))).Item!;
    expect(legacyItem.content).toEqual(legacy[1]!.content);
    const newItem = (await db.send(new GetCommand({ TableName: table, Key: { sessionId, seq: 5 } }))).Item!;
    expect(Object.keys(newItem).sort()).toEqual(['body', 'seq', 'sessionId']);
    expect(JSON.parse(newItem.body)).toMatchObject({ kind: 'assistant', role: 'assistant', content: [{ type: 'text', text: 'Still a long log.' }] });
  });
});
