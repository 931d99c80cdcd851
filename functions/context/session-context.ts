import type { ContentBlockParam } from '@anthropic-ai/sdk/resources/messages';
import { toApiMessages } from '../agent/transcript.ts';
import type { Deps } from '../deps/deps.ts';
import { CONVERSATION_KINDS, type MessageKind, type StoredMessage } from '../stores/message-store.ts';
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
}

export async function loadSessionContext(deps: Pick<Deps, 'messages'>, session: Pick<SessionRecord, 'sessionId' | 'compactBoundarySeq'>): Promise<LoadedContext> {
  const log = await deps.messages.loadFrom(session.sessionId, session.compactBoundarySeq ?? 0);
  return contextFromLog(log);
}

export function contextFromLog(log: StoredMessage[]): LoadedContext {
  const state = createContentReplacementState();
  const conversation: StoredMessage[] = [];
  for (const item of log) {
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
  return { conversation, replacementState: state, measured, itemsRead: log.length };
}

/** Appends one item to the session's log under the caller's lease (the turn's write-ahead append). */
export type LogAppender = (
  kind: MessageKind,
  role: 'user' | 'assistant',
  content: ContentBlockParam[],
  extra?: Partial<StoredMessage>,
) => Promise<StoredMessage>;

/**
 * A write-ahead appender for work that runs outside a turn (manual compaction, import): each
 * item is durable before the session's head moves past it, all under the caller's lease.
 */
export function createLogAppender(deps: Deps, session: SessionRecord, owner: string, turnId: string): { append: LogAppender; nextSeq: () => number } {
  let nextSeq = session.messageCount;
  const append: LogAppender = async (kind, role, content, extra = {}) => {
    const message: StoredMessage = {
      sessionId: session.sessionId, seq: nextSeq, uuid: deps.newId('msg'), turnId, kind, role, content,
      createdAt: new Date(deps.clock()).toISOString(), ...extra,
    };
    await deps.messages.append(message);
    nextSeq += 1;
    await deps.sessions.updateUnderLease(session.sessionId, owner, { messageCount: nextSeq }, deps.clock() + deps.config.turn.leaseMs);
    return message;
  };
  return { append, nextSeq: () => nextSeq };
}
