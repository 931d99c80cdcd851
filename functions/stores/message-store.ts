import { PutCommand, QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { ContentBlockParam } from '@anthropic-ai/sdk/resources/messages';
import { decodeCursor, encodeCursor } from './session-store.ts';

/** What a stored message is, beyond its role. */
export type MessageKind =
  | 'prompt' // the user's prompt that starts a turn
  | 'assistant' // one complete model response
  | 'tool_result' // the result of one tool_use
  | 'synthetic'; // written by the harness to keep the transcript valid (e.g. results for dangling tool_use)

export interface StoredMessage {
  sessionId: string;
  seq: number;
  uuid: string;
  turnId: string;
  kind: MessageKind;
  role: 'user' | 'assistant';
  content: ContentBlockParam[];
  createdAt: string;
  model?: string;
  stopReason?: string | null;
  usage?: { inputTokens: number; outputTokens: number };
}

export interface MessagePage {
  messages: StoredMessage[];
  nextCursor?: string;
}

/**
 * The append-only message log. Each message is its own item, written the moment it exists with
 * a create-only condition on its sequence number, so a replayed or racing write can never
 * overwrite history.
 */
export class MessageStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  async append(message: StoredMessage): Promise<void> {
    await this.db.send(
      new PutCommand({ TableName: this.table, Item: message, ConditionExpression: 'attribute_not_exists(seq)' }),
    );
  }

  async page(sessionId: string, opts: { limit: number; cursor?: string; fromSeq?: number }): Promise<MessagePage> {
    const out = await this.db.send(
      new QueryCommand({
        TableName: this.table,
        KeyConditionExpression: 'sessionId = :s AND seq >= :from',
        ExpressionAttributeValues: { ':s': sessionId, ':from': opts.fromSeq ?? 0 },
        Limit: opts.limit,
        ExclusiveStartKey: opts.cursor ? decodeCursor(opts.cursor) : undefined,
        ConsistentRead: true,
      }),
    );
    return {
      messages: (out.Items ?? []) as StoredMessage[],
      nextCursor: out.LastEvaluatedKey ? encodeCursor(out.LastEvaluatedKey) : undefined,
    };
  }

  /** Every message from `fromSeq` on, in order (follows DynamoDB's 1 MB pages). */
  async loadFrom(sessionId: string, fromSeq = 0): Promise<StoredMessage[]> {
    const all: StoredMessage[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.page(sessionId, { limit: 1000, cursor, fromSeq });
      all.push(...page.messages);
      cursor = page.nextCursor;
    } while (cursor);
    return all;
  }
}
