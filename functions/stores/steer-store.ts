import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/** Queued messages are kept a day at most: a run that has not taken one by then never will. */
const STEER_TTL_SECONDS = 24 * 3_600;

/** The sort key of a session's binding item: sorts before every steer id (an ISO time). */
const BINDING = '#thread';

/**
 * A comment that arrived while a run worked on its issue or pull request, waiting for the run's
 * session. `queued` until a turn (or a run of its own) takes it with a conditional update;
 * deleted once it is in the session's log. Queued under the item's thread key: the first run on
 * an issue may not have made its session yet when a comment arrives.
 */
export interface SteerRecord {
  /** The thread key of the issue or pull request (functions/stores/github-store.ts). */
  queueKey: string;
  /** `<arrival time ISO>#<delivery id>`: the sort key, so an item's steers list in arrival order. */
  steerId: string;
  tenantId: string;
  /** The delivery that carried it and the comment (acknowledged with a reaction). */
  deliveryId: string;
  commentId?: number;
  author: string;
  /** The message as the session will read it (the comment, already marked as untrusted text). */
  text: string;
  createdAt: string;
  status: 'queued' | 'taken';
  /** Who took it: a turn id, or the run started for it. */
  takenBy?: string;
  /** The trigger of the delivery that carried it, for the run of its own it gets if no turn takes it. */
  trigger: Record<string, unknown>;
  ttl: number;
}

export function steerId(createdAt: string, deliveryId: string): string {
  return `${createdAt}#${deliveryId}`;
}

/**
 * The queue of steering messages per issue or pull request (table `githubSteers`), and which
 * item each GitHub run's session works on (a binding item under `session:<id>`), so the turn
 * loop finds its queue from its session.
 */
export class SteerStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  /** Records that `sessionId` works on the item queued under `queueKey` (written before each run's turn). */
  async bindSession(sessionId: string, queueKey: string): Promise<void> {
    await this.db.send(new PutCommand({ TableName: this.table, Item: { queueKey: `session:${sessionId}`, steerId: BINDING, itemKey: queueKey } }));
  }

  /** The queue key of the item a session works on; undefined for a session no GitHub run bound. */
  async queueOf(sessionId: string): Promise<string | undefined> {
    const out = await this.db.send(
      new GetCommand({ TableName: this.table, Key: { queueKey: `session:${sessionId}`, steerId: BINDING }, ConsistentRead: true }),
    );
    return (out.Item as { itemKey?: string } | undefined)?.itemKey;
  }

  /** Queues a message; false when the same one was queued before (the delivery was handled twice). */
  async enqueue(record: Omit<SteerRecord, 'status' | 'ttl' | 'takenBy'>, now: number): Promise<boolean> {
    const item: SteerRecord = { ...record, status: 'queued', ttl: Math.floor(now / 1000) + STEER_TTL_SECONDS };
    try {
      await this.db.send(new PutCommand({ TableName: this.table, Item: item, ConditionExpression: 'attribute_not_exists(steerId)' }));
      return true;
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return false;
      throw err;
    }
  }

  /** An item's steers (queued and taken), oldest first. */
  async list(queueKey: string): Promise<SteerRecord[]> {
    const items: SteerRecord[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const out = await this.db.send(
        new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: 'queueKey = :k',
          ExpressionAttributeValues: { ':k': queueKey },
          ConsistentRead: true,
          ExclusiveStartKey: start,
        }),
      );
      items.push(...((out.Items ?? []) as SteerRecord[]));
      start = out.LastEvaluatedKey;
    } while (start);
    return items;
  }

  /** Takes a queued message for `takenBy`; false when someone else took it first (or it is gone). */
  async take(queueKey: string, id: string, takenBy: string): Promise<boolean> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { queueKey, steerId: id },
          UpdateExpression: 'SET #status = :taken, takenBy = :by',
          ConditionExpression: '#status = :queued',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':taken': 'taken', ':queued': 'queued', ':by': takenBy },
        }),
      );
      return true;
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return false;
      throw err;
    }
  }

  /**
   * Takes over a message another turn took and never confirmed (its process died between the
   * take and the log); false when someone else took it over first.
   */
  async takeOver(queueKey: string, id: string, from: string, to: string): Promise<boolean> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { queueKey, steerId: id },
          UpdateExpression: 'SET takenBy = :to',
          ConditionExpression: '#status = :taken AND takenBy = :from',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':taken': 'taken', ':from': from, ':to': to },
        }),
      );
      return true;
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return false;
      throw err;
    }
  }

  /** Drops a message that is in the session's log now. */
  async remove(queueKey: string, id: string): Promise<void> {
    await this.db.send(new DeleteCommand({ TableName: this.table, Key: { queueKey, steerId: id } }));
  }
}
