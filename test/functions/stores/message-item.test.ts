import { describe, expect, it } from 'vitest';
import { decodeMessageItem, encodeMessageItem } from '../../../functions/stores/message-item.ts';
import type { StoredMessage } from '../../../functions/stores/message-store.ts';

const message: StoredMessage = {
  sessionId: 'ses_item',
  seq: 7,
  uuid: 'msg_7',
  turnId: 'turn_1',
  kind: 'assistant',
  role: 'assistant',
  createdAt: '2026-01-01T00:00:00.000Z',
  content: [
    { type: 'text', text: 'héllo — ✓' },
    { type: 'tool_use', id: 'toolu_1', name: 'Bash', input: { command: 'ls', nested: { list: [1, null, 'x'] } } },
  ],
  model: 'claude-x',
  stopReason: null,
  usage: { inputTokens: 10, outputTokens: 2, costUsd: 0.0001 },
  decisions: { seen: ['toolu_0'], replaced: [{ toolUseId: 'toolu_00', replacement: 'r' }] },
};

describe('message items', () => {
  it('are the keys plus one JSON body, and decode back to the message', () => {
    const { item } = encodeMessageItem(message);
    expect(Object.keys(item).sort()).toEqual(['body', 'seq', 'sessionId']);
    expect(item).toMatchObject({ sessionId: 'ses_item', seq: 7 });
    expect(JSON.parse(item.body)).not.toHaveProperty('sessionId');
    expect(decodeMessageItem<StoredMessage>({ ...item })).toEqual(message);
  });

  it('count their size as DynamoDB does: attribute names plus UTF-8 values', () => {
    const { item, bytes } = encodeMessageItem(message);
    expect(bytes).toBe('sessionId'.length + 'ses_item'.length + 'seq'.length + 1 + 'body'.length + Buffer.byteLength(item.body));
    expect(Buffer.byteLength(item.body)).toBeGreaterThan(item.body.length);
  });

  it('pass a legacy item (every field its own attribute) through as it is', () => {
    expect(decodeMessageItem<StoredMessage>({ ...message })).toEqual(message);
  });

  it('refuse a body that is not a string rather than guess', () => {
    expect(() => decodeMessageItem({ sessionId: 's', seq: 1, body: new Uint8Array([1]) })).toThrow(/s#1: its body is not a string/);
  });
});
