import type { ContentBlockParam } from '@anthropic-ai/sdk/resources/messages';
import { parseClaudeJsonl, toClaudeJsonl } from '../context/claude-jsonl.ts';
import { ERROR_NOT_ENOUGH_MESSAGES } from '../context/compact.ts';
import { createContextManager } from '../context/context-manager.ts';
import { loadSessionContext, type LogAppender } from '../context/session-context.ts';
import { danglingToolUses, syntheticResults, toApiMessages } from '../context/transcript.ts';
import { errorMessage, UserError } from '../shared/errors.ts';
import type { MessageKind } from '../stores/message-store.ts';
import type { SessionRecord } from '../stores/session-store.ts';
import { reapDeadLease } from '../turn/crashed-turn.ts';
import { buildSystemPrompt } from '../agent/system-prompt.ts';
import type { TurnDeps } from '../agent/turn-deps.ts';
import { createLogWriter } from '../agent/turn-recorder.ts';

/** What work under a session's lease outside a turn uses (compaction, import, export). */
export type SessionOpDeps = Pick<
  TurnDeps,
  'config' | 'sessions' | 'messages' | 'events' | 'blobs' | 'model' | 'tools' | 'clock' | 'newId' | 'log' | 'instanceId'
>;

/**
 * Runs `work` holding the session's lease, as a turn would (409 while a turn runs), and gives
 * the lease back with the new message count whatever happens.
 */
async function withSessionLease<T>(
  deps: SessionOpDeps,
  sessionId: string,
  tenantId: string,
  work: (session: SessionRecord, append: LogAppender, owner: string) => Promise<T>,
): Promise<T> {
  // A turn whose process died is ended properly (crashed) before the operation takes its session.
  await reapDeadLease(deps, await deps.sessions.getForTenant(sessionId, tenantId));
  const opId = deps.newId('op');
  const owner = `${deps.instanceId}/${opId}`;
  const now = deps.clock();
  const session = await deps.sessions.acquireLease(sessionId, { owner, turnId: opId, expiresAt: now + deps.config.turn.leaseMs }, now);
  const writer = createLogWriter(deps, { sessionId, owner, turnId: opId, firstSeq: session.messageCount });
  try {
    const result = await work(session, writer.append, owner);
    await writer.head.flush();
    return result;
  } finally {
    await writer.settled();
    await deps.sessions
      .releaseLease(sessionId, owner, { status: session.status === 'failed' ? 'failed' : 'idle', messageCount: writer.storedCount() })
      .catch((err: unknown) => deps.log.error('could not release the session lease; it will expire', { sessionId, error: errorMessage(err) }));
  }
}

/** `POST /v1/sessions/:id/compact`: summarise now, write a boundary, keep the recent tail. */
export async function compactSession(deps: SessionOpDeps, opts: { sessionId: string; tenantId: string }) {
  return withSessionLease(deps, opts.sessionId, opts.tenantId, async (session, append, owner) => {
    const loaded = await loadSessionContext(deps, session);
    const dangling = danglingToolUses(loaded.conversation);
    if (dangling.length > 0) loaded.conversation.push(await append('synthetic', 'user', syntheticResults(dangling)));
    const log = deps.log.child({ sessionId: session.sessionId, op: 'compact' });
    const manager = createContextManager(deps, { session, owner, append, loaded, log });
    const base = { model: deps.config.model.name, max_tokens: deps.config.model.maxTokens, system: buildSystemPrompt(), tools: deps.tools.toApiTools() };
    try {
      const history = await manager.compactNow(toApiMessages(loaded.conversation), base, new AbortController().signal, 'manual');
      const after = await deps.sessions.get(session.sessionId);
      return { sessionId: session.sessionId, reloadFromSeq: after?.reloadFromSeq ?? null, messagesAfterBoundary: history.length };
    } catch (err) {
      if (errorMessage(err) === ERROR_NOT_ENOUGH_MESSAGES) throw new UserError(ERROR_NOT_ENOUGH_MESSAGES, 'not_enough_messages');
      throw err;
    }
  });
}

/** `GET /v1/sessions/:id/transcript.jsonl`: the whole log in Claude Code's transcript format. */
export async function exportTranscript(
  deps: Pick<SessionOpDeps, 'sessions' | 'messages'>,
  opts: { sessionId: string; tenantId: string; cwd: string },
): Promise<string> {
  await deps.sessions.getForTenant(opts.sessionId, opts.tenantId);
  const log = await deps.messages.loadFrom(opts.sessionId, 0);
  return toClaudeJsonl(opts.sessionId, log, opts.cwd);
}

export type TranscriptItems = ReturnType<typeof parseClaudeJsonl>;

/** A Claude Code transcript to import, checked before any session is created for it (400 when it is not one). */
export function parseTranscriptForImport(jsonl: string): TranscriptItems {
  let items: TranscriptItems;
  try {
    items = parseClaudeJsonl(jsonl);
  } catch (err) {
    throw new UserError(`Invalid transcript: ${errorMessage(err)}`);
  }
  if (!items.some((i) => i.kind === 'message')) throw new UserError('Invalid transcript: it has no user or assistant messages.');
  return items;
}

/**
 * Writes a Claude Code transcript into a new, empty session: its conversation, compact
 * boundaries and replacement decisions become the session's log (the workspace starts empty:
 * local files are not in a transcript). A dangling tool_use is repaired by the first turn, as
 * after a crash.
 */
export async function importTranscript(deps: SessionOpDeps, opts: { sessionId: string; tenantId: string; items: TranscriptItems }): Promise<SessionRecord> {
  await withSessionLease(deps, opts.sessionId, opts.tenantId, (_session, append, owner) => writeImported(deps, opts, append, owner));
  return (await deps.sessions.get(opts.sessionId))!;
}

async function writeImported(deps: SessionOpDeps, opts: { sessionId: string; items: TranscriptItems }, append: LogAppender, owner: string): Promise<void> {
  // Replacement records travel on the next item written, as the turn engine stores them.
  let replaced: { toolUseId: string; replacement: string }[] = [];
  const take = () => {
    const decisions = replaced.length ? { decisions: { seen: [], replaced } } : {};
    replaced = [];
    return decisions;
  };
  // A boundary opens a compaction group with the message after it (the summary): that message
  // is written first, then the boundary as the group's commit record, as compactions write them.
  let openBoundary: { trigger: 'auto' | 'manual'; preTokens: number } | undefined;
  let reloadFrom: number | null = null;
  for (const item of opts.items) {
    if (item.kind === 'replacements') {
      replaced.push(...item.replaced);
    } else if (item.kind === 'boundary') {
      openBoundary = { trigger: item.trigger, preTokens: item.preTokens };
    } else {
      const compactionId = openBoundary ? deps.newId('cmp') : undefined;
      const written = await append(importedKind(item.role, item.content, item.compactSummary), item.role, item.content, {
        ...(item.model ? { model: item.model } : {}),
        ...(item.role === 'assistant' ? { stopReason: item.stopReason ?? null } : {}),
        ...(compactionId ? { compactionId } : {}),
        ...take(),
      });
      if (!openBoundary || !compactionId) continue;
      await append('compact_boundary', 'user', [], {
        compactionId,
        compact: { ...openBoundary, messagesSummarized: 0, startSeq: written.seq, previousStartSeq: reloadFrom },
      });
      reloadFrom = written.seq;
      await deps.sessions.updateUnderLease(opts.sessionId, owner, { reloadFromSeq: written.seq });
      openBoundary = undefined;
    }
  }
}

function importedKind(role: 'user' | 'assistant', content: ContentBlockParam[], compactSummary: boolean): MessageKind {
  if (role === 'assistant') return 'assistant';
  if (compactSummary) return 'compact_summary';
  return content.some((b) => b.type === 'tool_result') ? 'tool_result' : 'prompt';
}
