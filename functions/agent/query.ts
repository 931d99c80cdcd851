import type Anthropic from '@anthropic-ai/sdk';
import type { ContentBlock, ContentBlockParam, MessageParam, ToolResultBlockParam, ToolUseBlock } from '@anthropic-ai/sdk/resources/messages';
import type { ContextManager } from '../context/context-manager.ts';
import type { HookDefinition } from '../hooks/types.ts';
import type { PermissionContext } from '../permissions/types.ts';
import { errorMessage } from '../shared/errors.ts';
import { StreamingToolExecutor } from '../tools/execution/streaming-executor.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import type { ToolUseEnv, UserDecision } from '../tools/run-tool-use.ts';
import type { ToolUseContext } from '../tools/tool.ts';
import { callModel, isPromptTooLong } from './model-call.ts';
import type { AssistantResponse } from './model-stream.ts';
import { MAX_OUTPUT_TOKENS_RECOVERY_LIMIT, MAX_OUTPUT_TOKENS_RECOVERY_TEXT, TRUNCATED_TOOL_USE_TEXT, truncatedToolUse } from './output-recovery.ts';
import { PartialResponse } from './partial-response.ts';
import type { TurnStopReason } from '../stores/turn-event.ts';

/** Defined with the stored turn events, which record it in `turn_end`. */
export type { TurnStopReason };

export type QueryEvent =
  | { type: 'text_delta'; text: string }
  | { type: 'assistant'; response: AssistantResponse }
  | { type: 'tool_progress'; toolUseId: string; toolName: string; progress: unknown }
  /** `extra` goes to the model after the result (hook context, the tool's newMessages). */
  | { type: 'tool_result'; toolName: string; block: ToolResultBlockParam; extra: ContentBlockParam[]; denied: boolean }
  | { type: 'permission_request'; toolUseId: string; toolName: string; input: unknown; message: string }
  | { type: 'tool_deferred'; toolUseId: string; toolName: string; input: unknown }
  /** A partial response voided by a broken stream before any tool started (recorded, never sent again); a retry follows. */
  | { type: 'tombstone'; content: ContentBlock[]; error: string }
  | { type: 'retry'; attempt: number; delayMs: number; status?: number; error: string }
  /** A user message the loop added (the max_tokens resume request). */
  | { type: 'meta_user'; text: string }
  | { type: 'done'; stopReason: TurnStopReason; error?: string };

export interface QueryParams {
  client: Anthropic;
  model: string;
  maxTokens: number;
  system: string;
  /** The conversation so far, API-shaped, ending with a user message (a prompt or tool results). */
  messages: MessageParam[];
  registry: ToolRegistry;
  toolContext: ToolUseContext;
  permissions: PermissionContext;
  hooks?: readonly HookDefinition[];
  /** Most concurrency-safe tool calls at once (default 10). */
  maxToolConcurrency?: number;
  /** Most model calls one turn may make. */
  maxTurns: number;
  signal: AbortSignal;
  /**
   * Asked after each round of tool results: true ends this invocation's part of the turn
   * cleanly (near the function's deadline) so it can continue in a fresh one. Asking after a
   * round, not before a call, guarantees every invocation makes progress.
   */
  shouldCheckpoint?: () => boolean;
  /** Calls left waiting by an earlier turn (durable ask), run first with the answers given. */
  resume?: { blocks: Pick<ToolUseBlock, 'id' | 'name' | 'input'>[]; decisions: ReadonlyMap<string, UserDecision> };
  /** The context economy (budget, large-result persistence, compaction); absent = messages go out as they are. */
  context?: ContextManager;
  /** Our retries (the SDK's are off) and the fallback model. */
  retry?: { maxRetries: number; baseDelayMs: number; fallbackModel?: string };
}

/**
 * The query loop: call the model, run the tools it asks for while it streams, feed the results
 * back, until it stops asking or a bound is hit. It only yields; persisting, streaming to
 * clients and logging are consumers of these events. Every tool_use in a yielded assistant
 * message is followed by exactly one yielded tool_result — or, for a call waiting on a person,
 * a permission_request / tool_deferred that the resumed turn answers.
 */
export async function* query(params: QueryParams): AsyncGenerator<QueryEvent> {
  let messages = [...params.messages];
  const tools = params.registry.toApiTools();
  const env: ToolUseEnv = { pool: params.registry, permissions: params.permissions, hooks: params.hooks ?? [] };
  const base = { model: params.model, max_tokens: params.maxTokens, system: params.system, tools };
  let context = params.toolContext;
  let maxTokensRecoveries = 0;
  let reactiveCompactTried = false;

  if (params.resume && params.resume.blocks.length > 0) {
    const executor = new StreamingToolExecutor({ ...env, decisions: params.resume.decisions }, context, { maxConcurrency: params.maxToolConcurrency });
    for (const block of params.resume.blocks) executor.addTool(block);
    const outcome = yield* collectToolResults(executor, messages, params.context);
    context = executor.currentContext;
    if (outcome) return yield { type: 'done', stopReason: outcome };
  }

  for (let call = 1; ; call++) {
    if (params.signal.aborted) return yield { type: 'done', stopReason: 'aborted' };

    // Compaction, micro-compaction and the replacement budget, decided (and recorded) before the request.
    let requestMessages = messages;
    if (params.context) {
      const prepared = await params.context.prepare(messages, base, params.signal);
      messages = prepared.history;
      requestMessages = prepared.messages;
    }

    // Tools start at their content_block_stop, while the rest of the response streams.
    const executor = new StreamingToolExecutor(env, context, { maxConcurrency: params.maxToolConcurrency });
    let partial = new PartialResponse();
    let response: AssistantResponse | undefined;
    let streamError: string | undefined;
    try {
      const stream = callModel({
        client: params.client,
        request: { ...base, messages: requestMessages },
        signal: params.signal,
        maxRetries: params.retry?.maxRetries ?? 0,
        baseDelayMs: params.retry?.baseDelayMs ?? 0,
        fallbackModel: params.retry?.fallbackModel,
      });
      for await (const event of stream) {
        if (event.type === 'text_delta') {
          partial.text(event.index, event.text);
          yield { type: 'text_delta', text: event.text };
        } else if (event.type === 'tool_use') {
          partial.toolUse(event.block);
          // Input that did not parse waits for the whole message: cut off by max_tokens, it is not run.
          if (!hasUnparsableInput(event.block)) executor.addTool(event.block);
        } else if (event.type === 'message') {
          response = event.response;
        } else if (event.type === 'tombstone') {
          // Tools already started have effects: keep what streamed as a real message instead of
          // retrying (below). Nothing started: void the partial response and let the retry run.
          if (executor.size > 0) {
            streamError = event.error;
            break;
          }
          yield event;
          partial = new PartialResponse();
        } else if (event.type === 'retry') {
          yield event;
        }
        for (const p of executor.takeProgress()) yield { type: 'tool_progress', toolUseId: p.toolUseId, toolName: p.toolName, progress: p.progress };
      }
      if (!response) streamError ??= 'The model stream ended without a message.';
    } catch (err) {
      streamError = errorMessage(err);
      // A prompt too long for the window is withheld while one compaction is tried.
      if (params.context && executor.size === 0 && !params.signal.aborted && !reactiveCompactTried && isPromptTooLong(err)) {
        reactiveCompactTried = true;
        try {
          messages = await params.context.compactNow(messages, base, params.signal, 'auto');
          call -= 1;
          continue;
        } catch {
          // Fall through: the original error is the one to report.
        }
      }
    }

    if (!response) {
      const stopReason = params.signal.aborted ? 'aborted' : 'model_error';
      if (executor.size > 0) {
        // Calls already started have effects: record them with the text that preceded them.
        executor.discard();
        yield { type: 'assistant', response: partial.toResponse(params.model) };
        for await (const event of drain(executor, params.context)) yield event;
      }
      return yield { type: 'done', stopReason, ...(stopReason === 'model_error' ? { error: streamError } : {}) };
    }

    yield { type: 'assistant', response };
    messages.push({ role: 'assistant', content: response.content });
    params.context?.recordUsage(response.usage, messages.length);
    const toolUses = response.content.filter((b): b is ToolUseBlock => b.type === 'tool_use');
    const truncated = truncatedToolUse(response.content, response.stopReason);
    for (const block of toolUses) {
      if (executor.statusOf(block.id) !== undefined) continue;
      if (block === truncated) executor.addSynthetic(block, TRUNCATED_TOOL_USE_TEXT);
      else executor.addTool(block);
    }
    if (toolUses.length === 0) {
      // A response cut off by max_tokens is withheld and resumed, up to the limit.
      if (response.stopReason === 'max_tokens' && maxTokensRecoveries < MAX_OUTPUT_TOKENS_RECOVERY_LIMIT && call < params.maxTurns) {
        maxTokensRecoveries += 1;
        yield { type: 'meta_user', text: MAX_OUTPUT_TOKENS_RECOVERY_TEXT };
        messages.push({ role: 'user', content: [{ type: 'text', text: MAX_OUTPUT_TOKENS_RECOVERY_TEXT }] });
        continue;
      }
      return yield { type: 'done', stopReason: stopReasonOf(response) };
    }

    const outcome = yield* collectToolResults(executor, messages, params.context);
    context = executor.currentContext;
    if (outcome) return yield { type: 'done', stopReason: outcome };
    if (params.signal.aborted) return yield { type: 'done', stopReason: 'aborted' };
    if (call >= params.maxTurns) return yield { type: 'done', stopReason: 'max_turns' };
    if (params.shouldCheckpoint?.()) return yield { type: 'done', stopReason: 'checkpoint' };
  }
}

/**
 * Yields every result of the executor's calls and appends them to the conversation. Returns a
 * reason to end the turn, if any: a call waits for a person, or a hook asked to stop.
 */
async function* collectToolResults(
  executor: StreamingToolExecutor,
  messages: MessageParam[],
  contextManager: ContextManager | undefined,
): AsyncGenerator<QueryEvent, TurnStopReason | undefined> {
  const results: ContentBlockParam[] = [];
  const extras: ContentBlockParam[] = [];
  let waiting = false;
  for await (const event of drain(executor, contextManager)) {
    yield event;
    if (event.type === 'tool_result') {
      results.push(event.block);
      extras.push(...event.extra);
    } else if (event.type === 'permission_request' || event.type === 'tool_deferred') waiting = true;
  }
  if (waiting) return 'awaiting_permission';
  appendUserContent(messages, [...results, ...extras]);
  return executor.stopRequested ? 'hook_stopped' : undefined;
}

/** Adds to the last user message when there is one (results of one response belong together). */
function appendUserContent(messages: MessageParam[], content: ContentBlockParam[]): void {
  const last = messages[messages.length - 1];
  if (last?.role === 'user') {
    const previous = typeof last.content === 'string' ? [{ type: 'text' as const, text: last.content }] : last.content;
    const merged = [...previous, ...content];
    last.content = [...merged.filter((b) => b.type === 'tool_result'), ...merged.filter((b) => b.type !== 'tool_result')];
  } else {
    messages.push({ role: 'user', content });
  }
}

/** The executor's updates as query events, in call order; large results are persisted on the way. */
async function* drain(executor: StreamingToolExecutor, contextManager: ContextManager | undefined): AsyncGenerator<QueryEvent> {
  for await (const update of executor.getRemainingResults()) {
    if (update.type === 'progress') {
      yield { type: 'tool_progress', toolUseId: update.toolUseId, toolName: update.toolName, progress: update.progress };
    } else if (update.type === 'deferred') {
      yield { type: 'tool_deferred', toolUseId: update.block.id, toolName: update.block.name, input: update.block.input };
    } else if (update.outcome.kind === 'ask') {
      const o = update.outcome;
      yield { type: 'permission_request', toolUseId: o.toolUseId, toolName: o.toolName, input: o.input, message: o.message };
    } else {
      const o = update.outcome;
      const block = contextManager ? await contextManager.processToolResult(o.result, update.block.name) : o.result;
      yield { type: 'tool_result', toolName: update.block.name, block, extra: o.extra, denied: o.denied !== undefined };
    }
  }
}

function hasUnparsableInput(block: ToolUseBlock): boolean {
  return typeof block.input === 'object' && block.input !== null && '__unparsable_input' in block.input;
}

function stopReasonOf(response: AssistantResponse): TurnStopReason {
  switch (response.stopReason) {
    case 'max_tokens':
    case 'stop_sequence':
    case 'refusal':
    case 'pause_turn':
      return response.stopReason;
    default:
      return 'end_turn';
  }
}
