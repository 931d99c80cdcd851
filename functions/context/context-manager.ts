import type { ContentBlockParam, MessageParam, ToolResultBlockParam } from '@anthropic-ai/sdk/resources/messages';
import type { ModelRequest } from '../agent/model-stream.ts';
import { toApiMessages } from '../agent/transcript.ts';
import type { Deps } from '../deps/deps.ts';
import { errorMessage } from '../shared/errors.ts';
import type { Logger } from '../shared/logger.ts';
import type { MessageKind, StoredMessage } from '../stores/message-store.ts';
import type { SessionRecord } from '../stores/session-store.ts';
import { summarizeConversation, summaryMessageText } from './compact.ts';
import { processToolResultBlock } from './large-results.ts';
import type { ContextLimits } from './limits.ts';
import { microCompact } from './micro-compact.ts';
import { buildLargeToolResultMessage, persistToolResult } from './persisted-output.ts';
import { applyReplacements, enforceToolResultBudget, isEmptyDecisions, type ReplacementDecisions } from './replacement-state.ts';
import type { LoadedContext, LogAppender } from './session-context.ts';
import { countTokensExactly, tokenCountWithEstimation, type UsageLike, contextTokensOf } from './tokens.ts';

/** Auto-compaction stops trying after this many failures in a row (per session, across turns). */
export const MAX_CONSECUTIVE_AUTOCOMPACT_FAILURES = 3;
/** Output tokens reserved for the summary when computing the effective window. */
const SUMMARY_RESERVE_TOKENS = 20_000;

/** The fixed parts of a model request: compaction's summary call shares them (and their cache). */
export type RequestBase = Pick<ModelRequest, 'model' | 'system' | 'tools' | 'max_tokens'>;

/**
 * The context economy for one turn, as three hooks the query loop calls:
 * `prepare` before each model call (micro-compaction, auto-compaction, the replacement budget,
 * with every decision written to the log before the request goes out), `processToolResult`
 * after each tool call (persist a large result), and `recordUsage` after each response.
 */
export interface ContextManager {
  prepare(history: MessageParam[], base: RequestBase, signal: AbortSignal): Promise<{ history: MessageParam[]; messages: MessageParam[]; compacted: boolean }>;
  processToolResult(block: ToolResultBlockParam, toolName: string): Promise<ToolResultBlockParam>;
  recordUsage(usage: UsageLike, historyLength: number): void;
  /**
   * Decisions made since the last call, to be stored on the message the request produces (the
   * assistant message). If that message is never written, the next reload decides again from the
   * same messages and settings, which gives the same answer.
   */
  takeDecisions(): ReplacementDecisions | undefined;
  /** Compacts now (the manual route); throws when it cannot. */
  compactNow(history: MessageParam[], base: RequestBase, signal: AbortSignal, trigger: 'auto' | 'manual'): Promise<MessageParam[]>;
}

export interface ContextManagerInput {
  session: SessionRecord;
  owner: string;
  append: LogAppender;
  loaded: LoadedContext;
  log: Logger;
}

export function contextLimitsOf(config: Deps['config']): ContextLimits {
  return {
    defaultMaxResultSizeChars: config.context.defaultMaxResultSizeChars,
    persistThresholdOverrides: config.context.persistThresholdOverrides,
    perMessageBudgetChars: config.context.perMessageBudgetChars,
  };
}

/** Tokens above which auto-compaction runs: the window, less the summary's reserve, less a buffer. */
export function autoCompactThreshold(config: Deps['config']): number {
  const effective = config.model.contextWindow - Math.min(config.model.maxTokens, SUMMARY_RESERVE_TOKENS);
  return Math.max(0, effective - config.context.autoCompactBufferTokens);
}

export function createContextManager(deps: Deps, input: ContextManagerInput): ContextManager {
  const { session, owner, append, log } = input;
  const state = input.loaded.replacementState;
  const limits = contextLimitsOf(deps.config);
  const cfg = deps.config.context;
  const threshold = autoCompactThreshold(deps.config);
  let measured = input.loaded.measured;
  let failures = session.autoCompactFailures ?? 0;
  let reloadFrom = session.reloadFromSeq ?? null;
  const skipToolNames = new Set(deps.tools.tools.filter((t) => !Number.isFinite(t.maxResultSizeChars)).map((t) => t.name));

  let pending: ReplacementDecisions = { seen: [], replaced: [] };
  const record = (decisions: ReplacementDecisions) => {
    pending.seen.push(...decisions.seen);
    pending.replaced.push(...decisions.replaced);
  };
  const takeDecisions = () => {
    const taken = pending;
    pending = { seen: [], replaced: [] };
    return isEmptyDecisions(taken) ? undefined : taken;
  };

  const compactNow: ContextManager['compactNow'] = async (history, base, signal, trigger) => {
    const visible = applyReplacements(history, state.replacements);
    const preTokens = tokenCountWithEstimation(visible, measured);
    const result = await summarizeConversation({
      client: deps.model, base, messages: visible, keepRecent: cfg.keepRecentMessages, signal,
      maxRetries: deps.config.model.maxRetries, retryBaseDelayMs: deps.config.model.retryBaseDelayMs, fallbackModel: deps.config.model.fallbackName,
    });
    // Write-ahead, in order: the summary (freezing the kept results), the kept tail as the model
    // saw it, then the boundary as the commit record (with any pending decisions). Until the
    // boundary exists a reload skips the rest; the session's pointer moves last.
    const compactionId = deps.newId('cmp');
    const keptIds = result.kept.flatMap((m) => (typeof m.content === 'string' ? [] : m.content.flatMap((b) => (b.type === 'tool_result' ? [b.tool_use_id] : []))));
    // Every kept result is frozen anew: the decisions that froze them before sit before the reload point.
    const freeze = { seen: keptIds, replaced: [] };
    const summary = await append('compact_summary', 'user', [{ type: 'text', text: summaryMessageText(result.summary) }], {
      compactionId, ...(isEmptyDecisions(freeze) ? {} : { decisions: freeze }),
    });
    const written: StoredMessage[] = [summary];
    for (const m of result.kept) {
      const content: ContentBlockParam[] = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : [...m.content];
      const role = m.role === 'assistant' ? 'assistant' : 'user';
      written.push(await append(kindOf(role, content), role, content, { compactionId }));
    }
    await append('compact_boundary', 'user', [], {
      compactionId,
      compact: { trigger, preTokens, messagesSummarized: result.summarizedCount, startSeq: summary.seq, previousStartSeq: reloadFrom },
      decisions: takeDecisions(),
    });
    for (const id of keptIds) state.seenIds.add(id);
    await deps.sessions.updateUnderLease(session.sessionId, owner, { reloadFromSeq: summary.seq, autoCompactFailures: 0 });
    failures = 0;
    reloadFrom = summary.seq;
    measured = undefined;
    log.info('conversation compacted', { trigger, preTokens, summarized: result.summarizedCount, kept: result.kept.length, reloadFromSeq: summary.seq });
    // Exactly what a reload from the boundary produces, so the next request's bytes match it.
    return toApiMessages(written);
  };

  return {
    async prepare(history, base, signal) {
      let compacted = false;
      let visible = applyReplacements(history, state.replacements);
      let tokens = tokenCountWithEstimation(visible, measured);
      const decisions: ReplacementDecisions = { seen: [], replaced: [] };
      if (tokens > threshold * cfg.microCompactRatio) {
        const cleared = microCompact(visible, state, cfg.microCompactKeepRecent);
        if (cleared.replaced.length > 0) {
          decisions.replaced.push(...cleared.replaced);
          visible = applyReplacements(history, state.replacements);
          tokens = tokenCountWithEstimation(visible, undefined);
          log.info('micro-compaction cleared old tool results', { cleared: cleared.replaced.length, tokens });
        }
      }
      if (cfg.autoCompact && tokens > threshold && failures < MAX_CONSECUTIVE_AUTOCOMPACT_FAILURES) {
        // The estimate decided to look; spending a summary call waits for the exact count.
        const exact = await countTokensExactly(deps.model, { ...base, messages: visible }).catch(() => tokens);
        if (exact > threshold) {
          record(decisions);
          decisions.replaced.length = 0;
          try {
            history = await compactNow(history, base, signal, 'auto');
            compacted = true;
          } catch (err) {
            if (signal.aborted) throw err;
            failures += 1;
            log.warn('auto-compaction failed', { error: errorMessage(err), consecutiveFailures: failures });
            await deps.sessions.updateUnderLease(session.sessionId, owner, { autoCompactFailures: failures });
          }
        }
      }
      const budgeted = await enforceToolResultBudget(history, state, {
        limit: limits.perMessageBudgetChars,
        skipToolNames,
        persist: async (toolUseId, content) => {
          const persisted = await persistToolResult(deps.blobs, session.sessionId, toolUseId, content);
          return 'error' in persisted ? null : buildLargeToolResultMessage(persisted);
        },
      });
      decisions.seen.push(...budgeted.decisions.seen);
      decisions.replaced.push(...budgeted.decisions.replaced);
      record(decisions);
      return { history, messages: budgeted.messages, compacted };
    },

    processToolResult(block, toolName) {
      const tool = deps.tools.find(toolName);
      if (!tool) return Promise.resolve(block);
      return processToolResultBlock({ blobs: deps.blobs, sessionId: session.sessionId, limits, log }, tool, block);
    },

    recordUsage(usage, historyLength) {
      measured = { tokens: contextTokensOf(usage), messageCount: historyLength };
    },

    compactNow,
    takeDecisions,
  };
}

function kindOf(role: 'user' | 'assistant', content: ContentBlockParam[]): MessageKind {
  if (role === 'assistant') return 'assistant';
  return content.some((b) => b.type === 'tool_result') ? 'tool_result' : 'prompt';
}
