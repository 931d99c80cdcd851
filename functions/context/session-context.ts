import type { ContentBlockParam } from '@anthropic-ai/sdk/resources/messages';
import { toApiMessages } from './transcript.ts';
import { CONVERSATION_KINDS, type MessageKind, type MessageStore, type StoredMessage } from '../stores/message-store.ts';
import type { SessionRecord } from '../stores/session-store.ts';
import { applyDecisions, createContentReplacementState, type ContentReplacementState } from './replacement-state.ts';
import { contextTokensOf } from './tokens.ts';

/** What a turn reloads of its conversation: only what follows the last compact boundary. */
export interface LoadedContext {
  /** Conversation messages in log order (no tombstones, no boundary). */
  conversation: StoredMessage[];
  replacementState: ContentReplacementState;
  /** The last response's measured context size and how many API messages it covered. */
  measured?: { tokens: number; messageCount: number };
  /** Log items read (for start-up figures). */
  itemsRead: number;
  /** The highest seq read (any kind), -1 if none: where the log's head really is. */
  lastSeq: number;
}

/**
 * The conversation a turn continues: the log from `reloadFromSeq` on, restarted at any later
 * completed compaction, without the items of a compaction that never completed.
 */
export async function loadSessionContext(
  deps: { messages: Pick<MessageStore, 'loadFrom'> },
  session: Pick<SessionRecord, 'sessionId' | 'reloadFromSeq'>,
): Promise<LoadedContext> {
  const log = await deps.messages.loadFrom(session.sessionId, session.reloadFromSeq ?? 0);
  return contextFromLog(log);
}

export function contextFromLog(log: StoredMessage[]): LoadedContext {
  // Compactions whose boundary (their commit record) made it into the log, by id → first seq.
  const committed = new Map<string, number>();
  for (const item of log) if (item.kind === 'compact_boundary' && item.compactionId && item.compact) committed.set(item.compactionId, item.compact.startSeq);
  const restarts = new Set(committed.values());
  const state = createContentReplacementState();
  let conversation: StoredMessage[] = [];
  for (const item of log) {
    if (item.compactionId && !committed.has(item.compactionId)) continue; // a compaction that never finished
    if (restarts.has(item.seq)) conversation = []; // a compaction finished after the session's pointer last moved
    if (item.decisions) applyDecisions(state, item.decisions);
    if (CONVERSATION_KINDS.has(item.kind)) conversation.push(item);
  }
  let measured: LoadedContext['measured'];
  for (let i = conversation.length - 1; i >= 0; i--) {
    const m = conversation[i]!;
    if (m.kind === 'assistant' && m.usage) {
      measured = { tokens: contextTokensOf(m.usage), messageCount: toApiMessages(conversation.slice(0, i + 1)).length };
      break;
    }
  }
  return { conversation, replacementState: state, measured, itemsRead: log.length, lastSeq: log.at(-1)?.seq ?? -1 };
}

/** Appends one item to the session's log under the caller's lease (the write-ahead append of `agent/turn-recorder.ts`). */
export type LogAppender = (
  kind: MessageKind,
  role: 'user' | 'assistant',
  content: ContentBlockParam[],
  extra?: Partial<StoredMessage>,
) => Promise<StoredMessage>;
