import { PutCommand, QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { deletePartition } from './delete-partition.ts';
import type { ContentBlockParam } from '@anthropic-ai/sdk/resources/messages';
import type { BlobStore } from './blob-store.ts';
import { z } from 'zod';
import { decodeCursor, encodeCursor, keyString } from './cursor.ts';
import { spilledMessageKey } from './bucket-layout.ts';
import { decodeMessageItem, encodeMessageItem } from './message-item.ts';

/**
 * DynamoDB refuses items over 400 KB (names and values together). Past this many bytes of item
 * (`encodeMessageItem` counts them) a message's payload goes to S3 and the item keeps a pointer;
 * the margin leaves room below the limit.
 */
export const SPILL_THRESHOLD_BYTES = 350_000;

/** What a stored message is, beyond its role. */
export type MessageKind =
  | 'prompt' // the user's prompt that starts a turn
  | 'assistant' // one complete model response
  | 'tool_result' // the result of one tool_use
  | 'synthetic' // written by the harness to keep the transcript valid (e.g. results for dangling tool_use)
  | 'tombstone' // an assistant message cut off by a broken stream: kept for the record, never sent again
  | 'compact_boundary' // the commit record of a compaction, written after its summary and kept tail
  | 'compact_summary'; // the summary the model sees in place of what came before

/** Kinds that are conversation: sent to the model (after the last boundary). */
export const CONVERSATION_KINDS: ReadonlySet<MessageKind> = new Set(['prompt', 'assistant', 'tool_result', 'synthetic', 'compact_summary']);

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
  /** This model call's own usage and cost (events carry the turn's running total instead). */
  usage?: { inputTokens: number; outputTokens: number; cacheReadInputTokens?: number; cacheCreationInputTokens?: number; costUsd?: number };
  /**
   * ContentReplacementState decisions made before the model call that produced this message (on
   * an assistant message), or at a compaction (on its boundary and summary). A reload folds them
   * in log order.
   */
  decisions?: { seen: string[]; replaced: { toolUseId: string; replacement: string }[] };
  /**
   * kind 'compact_boundary': what was summarised and why. `startSeq` is the compaction's first
   * item (the summary): the conversation restarts there.
   */
  compact?: { trigger: 'auto' | 'manual'; preTokens: number; messagesSummarized: number; startSeq: number; previousStartSeq: number | null };
  /**
   * Items written by one compaction (summary, kept tail, boundary) share this id. The boundary is
   * written last: a compaction cut short leaves items whose id has no boundary, and they are skipped.
   */
  compactionId?: string;
  /** kind 'tombstone': why the message was cut off. */
  error?: string;
  /** Where the payload went when the item would have passed DynamoDB's limit (content and decisions live there). */
  spill?: { key: string; bytes: number };
}

/** A message log cursor: the last item's key. */
const messageCursor = z.strictObject({ sessionId: keyString, seq: z.number().int().min(0) });

export interface MessagePage {
  messages: StoredMessage[];
  nextCursor?: string;
}

/**
 * The append-only message log. Each message is its own item (laid out as `message-item.ts`
 * says), written the moment it exists with a create-only condition on its sequence number, so
 * a replayed or racing write can never overwrite history.
 */
export class MessageStore {
  /** Every message of a session (DELETE); spilled payloads are removed with the session's `spill/` prefix. */
  async deleteAll(sessionId: string): Promise<number> {
    return deletePartition(this.db, this.table, { partition: 'sessionId', sort: 'seq' }, sessionId);
  }

  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
    private readonly blobs: BlobStore,
  ) {}

  /**
   * Appends one message, create-only on its seq. A payload too big for an item is written to S3
   * first (create-only too, keyed by seq and uuid), so the item that makes it visible never
   * points at something missing.
   */
  async append(message: StoredMessage): Promise<void> {
    let encoded = encodeMessageItem(message);
    if (encoded.bytes > SPILL_THRESHOLD_BYTES) {
      const key = spilledMessageKey(message.sessionId, message.seq, message.uuid);
      const payload = JSON.stringify({ content: message.content, decisions: message.decisions });
      await this.blobs.putIfAbsent(key, payload, 'application/json');
      const { decisions: _decisions, ...rest } = message;
      encoded = encodeMessageItem({ ...rest, content: [], spill: { key, bytes: Buffer.byteLength(payload) } });
    }
    await this.db.send(new PutCommand({ TableName: this.table, Item: encoded.item, ConditionExpression: 'attribute_not_exists(seq)' }));
  }

  /** Brings spilled payloads back from S3 (a few at a time). */
  private async resolveSpills(messages: StoredMessage[]): Promise<StoredMessage[]> {
    const spilled = messages.filter((m) => m.spill);
    for (let i = 0; i < spilled.length; i += 8) {
      await Promise.all(
        spilled.slice(i, i + 8).map(async (m) => {
          const text = await this.blobs.get(m.spill!.key);
          if (text === undefined) throw new Error(`Message ${m.sessionId}#${m.seq}: its payload ${m.spill!.key} is missing from S3`);
          const payload = JSON.parse(text) as Pick<StoredMessage, 'content' | 'decisions'>;
          m.content = payload.content;
          if (payload.decisions) m.decisions = payload.decisions;
        }),
      );
    }
    return messages;
  }

  /** One page from `fromSeq` on: `limit` items at most, and never more than DynamoDB's 1 MB a query reads. */
  async page(sessionId: string, opts: { limit?: number; cursor?: string; fromSeq?: number }): Promise<MessagePage> {
    const out = await this.db.send(
      new QueryCommand({
        TableName: this.table,
        KeyConditionExpression: 'sessionId = :s AND seq >= :from',
        ExpressionAttributeValues: { ':s': sessionId, ':from': opts.fromSeq ?? 0 },
        Limit: opts.limit,
        ExclusiveStartKey: opts.cursor ? decodeCursor(opts.cursor, messageCursor, { sessionId }) : undefined,
        ConsistentRead: true,
      }),
    );
    return {
      messages: await this.resolveSpills((out.Items ?? []).map((item) => decodeMessageItem<StoredMessage>(item))),
      nextCursor: out.LastEvaluatedKey ? encodeCursor(out.LastEvaluatedKey) : undefined,
    };
  }

  /**
   * Every message from `fromSeq` on, in order. Pages are DynamoDB's own (1 MB read each), not a
   * count of items: a turn's reload is one query per megabyte of log, and a log of exactly a
   * round number of items costs no extra, empty query to find its end.
   */
  async loadFrom(sessionId: string, fromSeq = 0): Promise<StoredMessage[]> {
    const all: StoredMessage[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.page(sessionId, { cursor, fromSeq });
      all.push(...page.messages);
      cursor = page.nextCursor;
    } while (cursor);
    return all;
  }
}
