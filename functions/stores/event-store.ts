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

  /** Create-only: a taken number fails with ConditionalCheckFailedException (each number is written once). */
  async append(sessionId: string, stored: StoredTurnEvent): Promise<void> {
    await this.db.send(
      new PutCommand({
        TableName: this.table,
        Item: {
          sessionId,
          eventKey: eventKey(stored.turnId, stored.seq),
          turnId: stored.turnId,
          seq: stored.seq,
          // Stored as a string: event payloads carry arbitrary tool input/output shapes.
          event: JSON.stringify(stored.event),
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

  /** Events of one turn with seq > afterSeq, in order. */
  async listAfter(sessionId: string, turnId: string, afterSeq: number, limit = 500): Promise<StoredTurnEvent[]> {
    const out = await this.db.send(
      new QueryCommand({
        TableName: this.table,
        KeyConditionExpression: 'sessionId = :s AND eventKey BETWEEN :from AND :to',
        ExpressionAttributeValues: { ':s': sessionId, ':from': eventKey(turnId, afterSeq + 1), ':to': `${turnId}/~` },
        Limit: limit,
        ConsistentRead: true,
      }),
    );
    return (out.Items ?? []).map(fromItem);
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
    return item ? fromItem(item) : undefined;
  }
}

function fromItem(item: Record<string, unknown>): StoredTurnEvent {
  return { turnId: item.turnId as string, seq: item.seq as number, event: JSON.parse(item.event as string) as TurnEvent };
}

function eventKey(turnId: string, seq: number): string {
  return `${turnId}/${String(seq).padStart(10, '0')}`;
}
