import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { TurnFeed } from '../../../functions/agent/turn-feed.ts';
import { createLogger } from '../../../functions/shared/logger.ts';
import { EventStore, MAX_EVENTS_PER_ITEM, type StoredTurnEvent } from '../../../functions/stores/event-store.ts';
import type { TurnEvent } from '../../../functions/stores/turn-event.ts';
import { useDynamoTables } from '../../support/dynamo-fixture.ts';

const progress = (n: number): TurnEvent => ({ type: 'tool_progress', toolUseId: `toolu_${n}`, toolName: 'Bash', progress: n });

/**
 * The turn event log stores consecutive events as one item (what piled up behind the write in
 * progress); readers see the same numbered events from any point, and items written one event
 * each (before batching) read back unchanged.
 */
describe('event store: batched items', () => {
  const fx = useDynamoTables();
  const TABLES = fx.tables;
  let store: EventStore;
  beforeAll(() => {
    store = new EventStore(fx.db, TABLES.events);
  });

  const itemCount = async (sessionId: string) =>
    (await fx.db.send(new QueryCommand({ TableName: TABLES.events, KeyConditionExpression: 'sessionId = :s', ExpressionAttributeValues: { ':s': sessionId } })))
      .Items!.length;

  it('a feed stores events that pile up behind a write as fewer items, and every read window sees them in order', async () => {
    const feed = new TurnFeed(store, 'ses_batch', 'turn_a', createLogger({ level: 'error' }));
    const seen: number[] = [];
    void (async () => {
      for await (const e of feed.live.read()) seen.push(e.seq);
    })();
    // Pushed in one go: the first write takes one event, the rest pile up behind it.
    for (let i = 0; i < 60; i++) feed.push(progress(i));
    await feed.close();

    const all = await store.listAfter('ses_batch', 'turn_a', -1);
    expect(all.map((e) => e.seq)).toEqual(Array.from({ length: 60 }, (_, i) => i));
    expect(all.map((e) => e.event)).toEqual(all.map((e) => progress(e.seq)));
    expect(seen).toEqual(all.map((e) => e.seq));
    const items = await itemCount('ses_batch');
    expect(items).toBeLessThan(60);
    expect(items).toBeGreaterThanOrEqual(Math.ceil(60 / MAX_EVENTS_PER_ITEM));

    for (const after of [-1, 0, 1, 17, 24, 25, 26, 40, 58, 59]) {
      for (const limit of [1, 3, 500]) {
        const page = await store.listAfter('ses_batch', 'turn_a', after, limit);
        expect(
          page.map((e) => e.seq),
          `after ${after}, limit ${limit}`,
        ).toEqual(
          all
            .filter((e) => e.seq > after)
            .slice(0, limit)
            .map((e) => e.seq),
        );
      }
    }
    expect((await store.last('ses_batch', 'turn_a'))?.seq).toBe(59);
  });

  it('reads items of one event each, written before batching, beside batched ones', async () => {
    for (let seq = 0; seq < 30; seq++) {
      await fx.db.send(
        new PutCommand({
          TableName: TABLES.events,
          Item: { sessionId: 'ses_old', eventKey: `turn_o/${String(seq).padStart(10, '0')}`, turnId: 'turn_o', seq, event: JSON.stringify(progress(seq)) },
        }),
      );
    }
    const batch: StoredTurnEvent[] = [30, 31, 32].map((seq) => ({ turnId: 'turn_o', seq, event: progress(seq) }));
    await store.append('ses_old', batch);

    expect((await store.listAfter('ses_old', 'turn_o', -1)).map((e) => e.seq)).toEqual(Array.from({ length: 33 }, (_, i) => i));
    expect((await store.listAfter('ses_old', 'turn_o', 28, 3)).map((e) => e.seq)).toEqual([29, 30, 31]);
    expect((await store.listAfter('ses_old', 'turn_o', 31, 5)).map((e) => e.seq)).toEqual([32]);
    expect(await store.last('ses_old', 'turn_o')).toEqual({ turnId: 'turn_o', seq: 32, event: progress(32) });
  });

  it('refuses a batch whose first number is taken, and batches that are not consecutive', async () => {
    await store.append('ses_taken', [{ turnId: 'turn_t', seq: 0, event: progress(0) }]);
    await expect(
      store.append(
        'ses_taken',
        [0, 1].map((seq) => ({ turnId: 'turn_t', seq, event: progress(seq) })),
      ),
    ).rejects.toBeInstanceOf(ConditionalCheckFailedException);
    await expect(
      store.append(
        'ses_taken',
        [1, 3].map((seq) => ({ turnId: 'turn_t', seq, event: progress(seq) })),
      ),
    ).rejects.toThrow(/consecutive/);
    await expect(store.append('ses_taken', [])).rejects.toThrow(/consecutive/);
    expect((await store.listAfter('ses_taken', 'turn_t', -1)).map((e) => e.seq)).toEqual([0]);
  });
});
