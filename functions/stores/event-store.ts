import { PutCommand, QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { deletePartition } from './delete-partition.ts';
import type { TurnEvent } from './turn-event.ts';
import { TTL_ATTRIBUTE } from './tables.ts';

/** One stored turn event; `seq` counts from 0 within its turn and is the SSE event id. */
export interface StoredTurnEvent {
  turnId: string;
  seq: number;
  event: TurnEvent;
}

/** How long turn events are kept for followers and reconnects. */
export const EVENT_RETENTION_SECONDS = 7 * 24 * 3600;

/**
 * Consecutive events stored as one item at most (the writer batches what piled up while its
 * previous write ran). Readers rely on it: the item holding seq n is keyed n - MAX_EVENTS_PER_ITEM + 1 or later.
 */
export const MAX_EVENTS_PER_ITEM = 25;

/**
 * The event log of turns: what lets a client reconnect to a running turn, and follow a turn
 * that continued in another Lambda invocation. Written in order by the turn's lease holder, and
 * ended with a `crashed` turn_end by whoever finds that holder dead.
 */
export class EventStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
    private readonly clock: () => number = Date.now,
  ) {}

  /**
   * Stores consecutive events of one turn (1 to MAX_EVENTS_PER_ITEM, numbered from the first's
   * seq) as one item keyed by the first number. Create-only: a taken first number fails with
   * ConditionalCheckFailedException, so two writers of one turn (the holder and whoever ended its
   * log after finding it dead) never both store from the same number.
   */
  async append(sessionId: string, batch: readonly StoredTurnEvent[]): Promise<void> {
    const first = batch[0];
    if (!first || batch.length > MAX_EVENTS_PER_ITEM || batch.some((e, i) => e.turnId !== first.turnId || e.seq !== first.seq + i)) {
      throw new Error(`An event item holds 1 to ${MAX_EVENTS_PER_ITEM} consecutive events of one turn.`);
    }
    await this.db.send(
      new PutCommand({
        TableName: this.table,
        Item: {
          sessionId,
          eventKey: eventKey(first.turnId, first.seq),
          turnId: first.turnId,
          seq: first.seq,
          // Stored as a string: event payloads carry arbitrary tool input/output shapes.
          events: JSON.stringify(batch.map((e) => e.event)),
          [TTL_ATTRIBUTE]: Math.floor(this.clock() / 1000) + EVENT_RETENTION_SECONDS,
        },
        ConditionExpression: 'attribute_not_exists(eventKey)',
      }),
    );
  }

  /** Every event of a session's turns (DELETE). */
  async deleteAll(sessionId: string): Promise<number> {
    return deletePartition(this.db, this.table, { partition: 'sessionId', sort: 'eventKey' }, sessionId);
  }

  /** Up to `limit` events of one turn with seq > afterSeq, in order. */
  async listAfter(sessionId: string, turnId: string, afterSeq: number, limit = 500): Promise<StoredTurnEvent[]> {
    // The item holding afterSeq + 1 may start up to MAX_EVENTS_PER_ITEM - 1 numbers before it.
    const from = Math.max(0, afterSeq + 2 - MAX_EVENTS_PER_ITEM);
    const out = await this.db.send(
      new QueryCommand({
        TableName: this.table,
        KeyConditionExpression: 'sessionId = :s AND eventKey BETWEEN :from AND :to',
        ExpressionAttributeValues: { ':s': sessionId, ':from': eventKey(turnId, from), ':to': `${turnId}/~` },
        // Items, not events: at most MAX_EVENTS_PER_ITEM - 1 of them start at or before afterSeq,
        // and every later one holds at least one event.
        Limit: limit + MAX_EVENTS_PER_ITEM - 1,
        ConsistentRead: true,
      }),
    );
    return (out.Items ?? [])
      .flatMap(fromItem)
      .filter((e) => e.seq > afterSeq)
      .slice(0, limit);
  }

  /** The newest stored event of one turn, if it has any. */
  async last(sessionId: string, turnId: string): Promise<StoredTurnEvent | undefined> {
    const out = await this.db.send(
      new QueryCommand({
        TableName: this.table,
        KeyConditionExpression: 'sessionId = :s AND eventKey BETWEEN :from AND :to',
        ExpressionAttributeValues: { ':s': sessionId, ':from': eventKey(turnId, 0), ':to': `${turnId}/~` },
        ScanIndexForward: false,
        Limit: 1,
        ConsistentRead: true,
      }),
    );
    const item = out.Items?.[0];
    return item ? fromItem(item).at(-1) : undefined;
  }
}

/** The events an item holds: a batch (`events`), or one event (`event`, items written before batching). */
function fromItem(item: Record<string, unknown>): StoredTurnEvent[] {
  const turnId = item.turnId as string;
  const first = item.seq as number;
  const events = typeof item.events === 'string' ? (JSON.parse(item.events) as TurnEvent[]) : [JSON.parse(item.event as string) as TurnEvent];
  return events.map((event, i) => ({ turnId, seq: first + i, event }));
}

function eventKey(turnId: string, seq: number): string {
  return `${turnId}/${String(seq).padStart(10, '0')}`;
}
