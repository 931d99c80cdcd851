import type { ModelClient } from '../model/model-client.ts';
import type { ContentBlockParam, MessageParam, ToolResultBlockParam } from '@anthropic-ai/sdk/resources/messages';
import type { ModelRequest } from '../model/model-stream.ts';
import { errorMessage } from '../shared/errors.ts';
import type { IdSource } from '../shared/ids.ts';
import type { Logger } from '../shared/logger.ts';
import type { BlobStore } from '../stores/blob-store.ts';
import type { MessageKind, StoredMessage } from '../stores/message-store.ts';
import type { SessionRecord, SessionStore } from '../stores/session-store.ts';
import { summarizeConversation, summaryMessageText } from './compact.ts';
import { processToolResultBlock } from './large-results.ts';
import type { ContextLimits } from './limits.ts';
import { microCompact } from './micro-compact.ts';
import { buildLargeToolResultMessage, persistToolResult } from './persisted-output.ts';
import {
  applyReplacements,
  cloneContentReplacementState,
  enforceToolResultBudget,
  isEmptyDecisions,
  type ContentReplacementState,
  type ReplacementDecisions,
} from './replacement-state.ts';
import type { LoadedContext, LogAppender } from './session-context.ts';
import { countTokensExactly, tokenCountWithEstimation, type UsageLike, contextTokensOf } from './tokens.ts';
import { toApiMessages } from './transcript.ts';

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
  /** A copy of the replacement decisions so far, for a fork that must decide exactly as this loop did. */
  cloneReplacementState(): ContentReplacementState;
}

/** The settings the context economy reads (the `context` and `model` parts of the configuration). */
export interface ContextConfig {
  context: ContextLimits & {
    autoCompact: boolean;
    autoCompactBufferTokens: number;
    keepRecentMessages: number;
    microCompactRatio: number;
    microCompactKeepRecent: number;
  };
  model: { contextWindow: number; maxTokens: number; maxRetries: number; retryBaseDelayMs: number; fallbackName?: string };
}

/** A tool as far as the context economy cares: how large a result it inlines, whether an old one may be cleared. */
interface ContextTool {
  name: string;
  maxResultSizeChars: number;
  compactableResult: boolean;
}

/** What the context economy uses: the summary model, S3 for large results, the session's record. */
export interface ContextDeps {
  config: ContextConfig;
  model: ModelClient;
  blobs: BlobStore;
  sessions: Pick<SessionStore, 'updateUnderLease'>;
  tools: { readonly tools: readonly ContextTool[]; find(name: string): ContextTool | undefined };
  newId: IdSource;
}

export interface ContextManagerInput {
  session: SessionRecord;
  owner: string;
  append: LogAppender;
  loaded: LoadedContext;
  log: Logger;
}

export function contextLimitsOf(config: ContextConfig): ContextLimits {
  return {
    defaultMaxResultSizeChars: config.context.defaultMaxResultSizeChars,
    persistThresholdOverrides: config.context.persistThresholdOverrides,
    perMessageBudgetChars: config.context.perMessageBudgetChars,
  };
}

/** Tokens above which auto-compaction runs: the window, less the summary's reserve, less a buffer. */
export function autoCompactThreshold(config: ContextConfig): number {
  const effective = config.model.contextWindow - Math.min(config.model.maxTokens, SUMMARY_RESERVE_TOKENS);
  return Math.max(0, effective - config.context.autoCompactBufferTokens);
}

/** One turn's (or one compaction's) context state, shared by the steps below. */
interface ManagerState extends ContextManagerInput {
  deps: ContextDeps;
  replacement: ContentReplacementState;
  limits: ContextLimits;
  threshold: number;
  measured: LoadedContext['measured'];
  failures: number;
  reloadFrom: number | null;
  skipToolNames: Set<string>;
  pending: ReplacementDecisions;
}

export function createContextManager(deps: ContextDeps, input: ContextManagerInput): ContextManager {
  const s: ManagerState = {
    ...input,
    deps,
    replacement: input.loaded.replacementState,
    limits: contextLimitsOf(deps.config),
    threshold: autoCompactThreshold(deps.config),
    measured: input.loaded.measured,
    failures: input.session.autoCompactFailures ?? 0,
    reloadFrom: input.session.reloadFromSeq ?? null,
    skipToolNames: new Set(deps.tools.tools.filter((t) => !Number.isFinite(t.maxResultSizeChars)).map((t) => t.name)),
    pending: { seen: [], replaced: [] },
  };
  return {
    prepare: (history, base, signal) => prepare(s, history, base, signal),
    processToolResult(block, toolName) {
      const tool = deps.tools.find(toolName);
      if (!tool) return Promise.resolve(block);
      return processToolResultBlock({ blobs: deps.blobs, sessionId: s.session.sessionId, limits: s.limits, log: s.log }, tool, block);
    },
    recordUsage(usage, historyLength) {
      s.measured = { tokens: contextTokensOf(usage), messageCount: historyLength };
    },
    compactNow: (history, base, signal, trigger) => compactNow(s, history, base, signal, trigger),
    takeDecisions: () => takeDecisions(s),
    cloneReplacementState: () => cloneContentReplacementState(s.replacement),
  };
}

function record(s: ManagerState, decisions: ReplacementDecisions): void {
  s.pending.seen.push(...decisions.seen);
  s.pending.replaced.push(...decisions.replaced);
}

function takeDecisions(s: ManagerState): ReplacementDecisions | undefined {
  const taken = s.pending;
  s.pending = { seen: [], replaced: [] };
  return isEmptyDecisions(taken) ? undefined : taken;
}

async function prepare(s: ManagerState, history: MessageParam[], base: RequestBase, signal: AbortSignal) {
  const cfg = s.deps.config.context;
  let compacted = false;
  let visible = applyReplacements(history, s.replacement.replacements);
  let tokens = tokenCountWithEstimation(visible, s.measured);
  const decisions: ReplacementDecisions = { seen: [], replaced: [] };
  if (tokens > s.threshold * cfg.microCompactRatio) {
    const cleared = microCompact(visible, s.replacement, cfg.microCompactKeepRecent, (name) => s.deps.tools.find(name)?.compactableResult === true);
    if (cleared.replaced.length > 0) {
      decisions.replaced.push(...cleared.replaced);
      visible = applyReplacements(history, s.replacement.replacements);
      tokens = tokenCountWithEstimation(visible, undefined);
      s.log.info('micro-compaction cleared old tool results', { cleared: cleared.replaced.length, tokens });
    }
  }
  if (cfg.autoCompact && tokens > s.threshold && s.failures < MAX_CONSECUTIVE_AUTOCOMPACT_FAILURES) {
    const next = await autoCompact(s, { history, visible, tokens, decisions, base, signal });
    compacted = next !== history;
    history = next;
  }
  const budgeted = await enforceToolResultBudget(history, s.replacement, {
    limit: s.limits.perMessageBudgetChars,
    skipToolNames: s.skipToolNames,
    persist: async (toolUseId, content) => {
      const persisted = await persistToolResult(s.deps.blobs, s.session.sessionId, toolUseId, content);
      return 'error' in persisted ? null : buildLargeToolResultMessage(persisted);
    },
  });
  decisions.seen.push(...budgeted.decisions.seen);
  decisions.replaced.push(...budgeted.decisions.replaced);
  record(s, decisions);
  return { history, messages: budgeted.messages, compacted };
}

/**
 * Compacts when the exact count confirms the estimate (the estimate decided to look; spending a
 * summary call waits for the exact count). Returns the history to go on with: the same array
 * when nothing was compacted. A failure counts towards the circuit breaker.
 */
async function autoCompact(
  s: ManagerState,
  at: { history: MessageParam[]; visible: MessageParam[]; tokens: number; decisions: ReplacementDecisions; base: RequestBase; signal: AbortSignal },
): Promise<MessageParam[]> {
  const exact = await countTokensExactly(s.deps.model, { ...at.base, messages: at.visible }).catch(() => at.tokens);
  if (exact <= s.threshold) return at.history;
  // Decisions so far travel on the boundary the compaction writes.
  record(s, at.decisions);
  at.decisions.replaced.length = 0;
  try {
    return await compactNow(s, at.history, at.base, at.signal, 'auto');
  } catch (err) {
    if (at.signal.aborted) throw err;
    s.failures += 1;
    s.log.warn('auto-compaction failed', { error: errorMessage(err), consecutiveFailures: s.failures });
    await s.deps.sessions.updateUnderLease(s.session.sessionId, s.owner, { autoCompactFailures: s.failures });
    return at.history;
  }
}

async function compactNow(
  s: ManagerState,
  history: MessageParam[],
  base: RequestBase,
  signal: AbortSignal,
  trigger: 'auto' | 'manual',
): Promise<MessageParam[]> {
  const { deps } = s;
  const visible = applyReplacements(history, s.replacement.replacements);
  const preTokens = tokenCountWithEstimation(visible, s.measured);
  const result = await summarizeConversation({
    client: deps.model,
    base,
    messages: visible,
    keepRecent: deps.config.context.keepRecentMessages,
    signal,
    maxRetries: deps.config.model.maxRetries,
    retryBaseDelayMs: deps.config.model.retryBaseDelayMs,
    fallbackModel: deps.config.model.fallbackName,
  });
  const { summary, written, keptIds } = await writeCompaction(s, result, { trigger, preTokens });
  for (const id of keptIds) s.replacement.seenIds.add(id);
  await deps.sessions.updateUnderLease(s.session.sessionId, s.owner, { reloadFromSeq: summary.seq, autoCompactFailures: 0 });
  s.failures = 0;
  s.reloadFrom = summary.seq;
  s.measured = undefined;
  s.log.info('conversation compacted', { trigger, preTokens, summarized: result.summarizedCount, kept: result.kept.length, reloadFromSeq: summary.seq });
  // Exactly what a reload from the boundary produces, so the next request's bytes match it.
  return toApiMessages(written);
}

/**
 * Write-ahead, in order: the summary (freezing the kept results), the kept tail as the model saw
 * it, then the boundary as the commit record (with any pending decisions). Until the boundary
 * exists a reload skips the rest; the session's pointer moves after (the caller).
 */
async function writeCompaction(
  s: ManagerState,
  result: Awaited<ReturnType<typeof summarizeConversation>>,
  compact: { trigger: 'auto' | 'manual'; preTokens: number },
): Promise<{ summary: StoredMessage; written: StoredMessage[]; keptIds: string[] }> {
  const compactionId = s.deps.newId('cmp');
  const keptIds = result.kept.flatMap((m) =>
    typeof m.content === 'string' ? [] : m.content.flatMap((b) => (b.type === 'tool_result' ? [b.tool_use_id] : [])),
  );
  // Every kept result is frozen anew: the decisions that froze them before sit before the reload point.
  const freeze = { seen: keptIds, replaced: [] };
  const summary = await s.append('compact_summary', 'user', [{ type: 'text', text: summaryMessageText(result.summary) }], {
    compactionId,
    ...(isEmptyDecisions(freeze) ? {} : { decisions: freeze }),
  });
  const written: StoredMessage[] = [summary];
  for (const m of result.kept) {
    const content: ContentBlockParam[] = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : [...m.content];
    const role = m.role === 'assistant' ? 'assistant' : 'user';
    written.push(await s.append(kindOf(role, content), role, content, { compactionId }));
  }
  await s.append('compact_boundary', 'user', [], {
    compactionId,
    compact: { ...compact, messagesSummarized: result.summarizedCount, startSeq: summary.seq, previousStartSeq: s.reloadFrom },
    decisions: takeDecisions(s),
  });
  return { summary, written, keptIds };
}

function kindOf(role: 'user' | 'assistant', content: ContentBlockParam[]): MessageKind {
  if (role === 'assistant') return 'assistant';
  return content.some((b) => b.type === 'tool_result') ? 'tool_result' : 'prompt';
}
