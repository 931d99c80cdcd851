import type { ContentBlockParam } from '@anthropic-ai/sdk/resources/messages';
import { reapDeadLease } from '../agent/crashed-turn.ts';
import { buildSystemPrompt } from '../agent/system-prompt.ts';
import { danglingToolUses, syntheticResults, toApiMessages } from '../agent/transcript.ts';
import type { Deps } from '../deps/deps.ts';
import { createSession } from '../sessions/create-session.ts';
import { errorMessage, UserError } from '../shared/errors.ts';
import type { MessageKind } from '../stores/message-store.ts';
import type { SessionRecord } from '../stores/session-store.ts';
import { parseClaudeJsonl, toClaudeJsonl } from './claude-jsonl.ts';
import { ERROR_NOT_ENOUGH_MESSAGES } from './compact.ts';
import { createContextManager } from './context-manager.ts';
import { createLogAppender, loadSessionContext, type LogAppender } from './session-context.ts';

/**
 * Runs `work` holding the session's lease, as a turn would (409 while a turn runs), and gives
 * the lease back with the new message count whatever happens.
 */
async function withSessionLease<T>(
  deps: Deps,
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
  const writer = createLogAppender(deps, session, owner, opId);
  try {
    return await work(session, writer.append, owner);
  } finally {
    await deps.sessions
      .releaseLease(sessionId, owner, { status: session.status === 'failed' ? 'failed' : 'idle', messageCount: writer.nextSeq() })
      .catch((err: unknown) => deps.log.error('could not release the session lease; it will expire', { sessionId, error: errorMessage(err) }));
  }
}

/** `POST /v1/sessions/:id/compact`: summarise now, write a boundary, keep the recent tail. */
export async function compactSession(deps: Deps, opts: { sessionId: string; tenantId: string }) {
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
export async function exportTranscript(deps: Deps, opts: { sessionId: string; tenantId: string; cwd: string }): Promise<string> {
  await deps.sessions.getForTenant(opts.sessionId, opts.tenantId);
  const log = await deps.messages.loadFrom(opts.sessionId, 0);
  return toClaudeJsonl(opts.sessionId, log, opts.cwd);
}

/**
 * Starts a cloud session from a Claude Code transcript: its conversation, compact boundaries and
 * replacement decisions become the new session's log (the workspace starts empty: local files
 * are not in a transcript). A dangling tool_use is repaired by the first turn, as after a crash.
 */
export async function importTranscript(deps: Deps, opts: { tenantId: string; jsonl: string; title?: string }): Promise<SessionRecord> {
  let items;
  try {
    items = parseClaudeJsonl(opts.jsonl);
  } catch (err) {
    throw new UserError(`Invalid transcript: ${errorMessage(err)}`);
  }
  if (!items.some((i) => i.kind === 'message')) throw new UserError('Invalid transcript: it has no user or assistant messages.');
  const created = await createSession(deps, { tenantId: opts.tenantId, title: opts.title ?? 'Imported from Claude Code' });
  await withSessionLease(deps, created.sessionId, opts.tenantId, async (_session, append, owner) => {
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
    for (const item of items) {
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
        if (openBoundary && compactionId) {
          await append('compact_boundary', 'user', [], {
            compactionId,
            compact: { ...openBoundary, messagesSummarized: 0, startSeq: written.seq, previousStartSeq: reloadFrom },
          });
          reloadFrom = written.seq;
          await deps.sessions.updateUnderLease(created.sessionId, owner, { reloadFromSeq: written.seq });
          openBoundary = undefined;
        }
      }
    }
  });
  return (await deps.sessions.get(created.sessionId))!;
}

function importedKind(role: 'user' | 'assistant', content: ContentBlockParam[], compactSummary: boolean): MessageKind {
  if (role === 'assistant') return 'assistant';
  if (compactSummary) return 'compact_summary';
  return content.some((b) => b.type === 'tool_result') ? 'tool_result' : 'prompt';
}
