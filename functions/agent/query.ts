import type { ModelClient } from '../model/model-client.ts';
import type { ContentBlock, ContentBlockParam, MessageParam, ToolResultBlockParam, ToolUseBlock } from '@anthropic-ai/sdk/resources/messages';
import type { ContextManager, RequestBase } from '../context/context-manager.ts';
import type { ReplacementDecisions } from '../context/replacement-state.ts';
import type { HookDefinition } from '../hooks/types.ts';
import type { PermissionContext } from '../permissions/types.ts';
import { callModel, isPromptTooLong, type ModelCallOptions } from '../model/model-call.ts';
import type { AssistantResponse } from '../model/model-stream.ts';
import { partialAssistantResponse } from '../model/partial-response.ts';
import { assertNever } from '../shared/assert-never.ts';
import { errorMessage } from '../shared/errors.ts';
import { StreamingToolExecutor, type ExecutorUpdate } from '../tools/execution/streaming-executor.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import { withoutToolReferences } from '../tools/tool-search/discovered-tools.ts';
import type { ToolUseEnv, ToolUseOutcome, UserDecision } from '../tools/run-tool-use.ts';
import type { ToolUseContext } from '../tools/tool.ts';
import type { ForkBase } from '../tools/agent/subagent-types.ts';
import { MAX_OUTPUT_TOKENS_RECOVERY_LIMIT, MAX_OUTPUT_TOKENS_RECOVERY_TEXT, TRUNCATED_TOOL_USE_TEXT, truncatedToolUse } from './output-recovery.ts';
import type { TurnStopReason } from '../stores/turn-event.ts';
import type { Tracing } from '../shared/tracing.ts';
import { tracedToolUse } from '../tools/execution/traced-tool-use.ts';

/** Defined with the stored turn events, which record it in `turn_end`. */
export type { TurnStopReason };

export type QueryEvent =
  | { type: 'text_delta'; text: string }
  /** A model response (or what streamed of one whose calls had started), with the replacement decisions its request was sent with. */
  | { type: 'assistant'; response: AssistantResponse; decisions?: ReplacementDecisions }
  | { type: 'tool_progress'; toolUseId: string; toolName: string; progress: unknown }
  /** `extra` goes to the model after the result (hook context, the tool's newMessages). */
  | { type: 'tool_result'; toolName: string; block: ToolResultBlockParam; extra: ContentBlockParam[]; denied: boolean }
  /** A call that waits for a person: a permission, or (with `interaction`) their input, e.g. answers to questions. */
  | { type: 'permission_request'; toolUseId: string; toolName: string; input: unknown; message: string; interaction?: 'question' | 'plan'; waitMs?: number }
  | { type: 'tool_deferred'; toolUseId: string; toolName: string; input: unknown }
  /** A partial response voided by a broken stream before any tool started (recorded, never sent again); a retry follows. */
  | { type: 'tombstone'; content: ContentBlock[]; error: string }
  | { type: 'retry'; attempt: number; delayMs: number; status?: number; error: string }
  /** The primary model stayed overloaded: this call and the rest of the turn's calls in this invocation use `to`. */
  | { type: 'fallback'; from: string; to: string }
  /** A user message the loop added (the max_tokens resume request, a background agent's notification). */
  | { type: 'meta_user'; text: string }
  | { type: 'done'; stopReason: TurnStopReason; error?: string };

export interface QueryParams {
  client: ModelClient;
  model: string;
  maxTokens: number;
  system: string;
  /** The conversation so far, API-shaped, ending with a user message (a prompt or tool results). */
  messages: MessageParam[];
  /**
   * Text that opens the first user message of every request (the session's instructions and
   * the date: functions/agent/project-context.ts). Added as each request is built, never stored
   * in the log, so it is read afresh at every turn's start.
   */
  userContext?: string;
  registry: ToolRegistry;
  toolContext: ToolUseContext;
  permissions: PermissionContext;
  hooks?: readonly HookDefinition[];
  /** Most concurrency-safe tool calls at once (default 10). */
  maxToolConcurrency?: number;
  /** Each tool call in a span of its own; absent: none. */
  tracing?: Tracing;
  /** Asked before each model call: a reason to end the turn there instead (a budget ran out). */
  beforeModelCall?: () => TurnStopReason | undefined;
  signal: AbortSignal;
  /**
   * Asked after each round of tool results: true ends this invocation's part of the turn
   * cleanly (near the function's deadline) so it can continue in a fresh one. Asking after a
   * round, not before a call, guarantees every invocation makes progress.
   */
  shouldCheckpoint?: () => boolean;
  /**
   * Messages from outside the loop (finished background sub-agents' notifications), taken before
   * each model call after the first and sent as a user message; `delivered` runs once they are
   * recorded.
   */
  takeNotifications?: () => Promise<{ texts: string[]; delivered: () => Promise<void> }>;
  /** Calls left waiting by an earlier turn (durable ask), run first with the answers given. */
  resume?: { blocks: Pick<ToolUseBlock, 'id' | 'name' | 'input'>[]; decisions: ReadonlyMap<string, UserDecision> };
  /** The context economy (budget, large-result persistence, compaction); absent = messages go out as they are. */
  context?: ContextManager;
  /** Our retries (the SDK's are off) and the fallback model. */
  retry?: { maxRetries: number; baseDelayMs: number; fallbackModel?: string };
  /**
   * Asked before a tool call that may have effects starts: something to wait for first (the
   * session's head writes, when the lease is not surely held without them), or undefined.
   */
  leaseHeld?: () => Promise<void> | undefined;
  /**
   * Awaited once each model request is on its way and before anything of its answer is acted
   * on (no tool starts, nothing is recorded): the log items stored behind the request (the last
   * response and its tool results) are durable by then. A rejection fails the turn.
   */
  logDurable?: () => Promise<void>;
}

/** What the loop carries from one model call to the next. */
interface LoopState {
  params: QueryParams;
  /** The conversation as the next request continues it (before the context economy's replacements). */
  messages: MessageParam[];
  env: ToolUseEnv;
  /** The fixed parts of each request; `model` becomes the fallback once the primary stayed overloaded. */
  base: RequestBase & { model: string; max_tokens: number };
  toolContext: ToolUseContext;
  maxTokensRecoveries: number;
  reactiveCompactTried: boolean;
  /** The request being answered and the calls streamed so far: what a fork repeats. */
  forkBase?: ForkBase;
}

/** How one model call's stream ended. */
type Streamed =
  | { kind: 'response'; response: AssistantResponse }
  /** No whole message: `partial` is what streamed of it (it matters only when calls had started). */
  | { kind: 'failed'; error: string | undefined; partial: ContentBlock[] }
  /** The prompt was too long and a compaction made it fit: make the call again. */
  | { kind: 'compacted' };

/**
 * The query loop: call the model, run the tools it asks for while it streams, feed the results
 * back, until it stops asking or a bound is hit. It only yields; persisting, streaming to
 * clients and logging are consumers of these events. Every tool_use in a yielded assistant
 * message is followed by exactly one yielded tool_result — or, for a call waiting on a person,
 * a permission_request / tool_deferred that the resumed turn answers.
 */
export async function* query(params: QueryParams): AsyncGenerator<QueryEvent> {
  const loop: LoopState = {
    params,
    messages: [...params.messages],
    env: { pool: params.registry, permissions: params.permissions, hooks: params.hooks ?? [] },
    base: { model: params.model, max_tokens: params.maxTokens, system: params.system, tools: params.registry.toApiTools(params.messages) },
    toolContext: params.toolContext,
    maxTokensRecoveries: 0,
    reactiveCompactTried: false,
  };
  if (params.resume && params.resume.blocks.length > 0) {
    const executor = newExecutor(loop, params.resume.decisions);
    for (const block of params.resume.blocks) executor.addTool(block);
    const outcome = yield* collectToolResults(loop, executor);
    if (outcome) return yield { type: 'done', stopReason: outcome };
  }
  for (let call = 1; ; call++) {
    if (params.signal.aborted) return yield { type: 'done', stopReason: 'aborted' };
    const stop = params.beforeModelCall?.();
    if (stop) return yield { type: 'done', stopReason: stop };
    if (call > 1 && params.takeNotifications) yield* addNotifications(loop, params.takeNotifications);
    // Tools found by ToolSearch since the last call join the tools array (the same array when none were).
    loop.base = { ...loop.base, tools: params.registry.toApiTools(loop.messages) };
    // Compaction, micro-compaction and the replacement budget, decided (and recorded) before the request.
    let requestMessages = loop.messages;
    if (params.context) {
      const prepared = await params.context.prepare(loop.messages, loop.base, params.signal);
      loop.messages = prepared.history;
      requestMessages = prepared.messages;
    }
    loop.forkBase = forkBaseOf(loop, requestMessages);
    // Tools start at their content_block_stop, while the rest of the response streams.
    const executor = newExecutor(loop);
    const streamed = yield* streamResponse(loop, executor, requestMessages);
    if (streamed.kind === 'compacted') {
      call -= 1;
      continue;
    }
    if (streamed.kind === 'failed') return yield* endWithoutResponse(loop, executor, streamed);
    // Stopped before anything of the response arrived: there is no message to record.
    if (params.signal.aborted && streamed.response.content.length === 0 && executor.size === 0) return yield { type: 'done', stopReason: 'aborted' };
    const next = yield* afterResponse(loop, executor, streamed.response);
    if (next !== 'next_call') return yield { type: 'done', stopReason: next };
  }
}

/** Notifications join the conversation as user text (after the tool results they follow, in the same message). */
async function* addNotifications(loop: LoopState, take: NonNullable<QueryParams['takeNotifications']>): AsyncGenerator<QueryEvent> {
  const notes = await take();
  if (notes.texts.length === 0) return;
  for (const text of notes.texts) {
    yield { type: 'meta_user', text };
    appendUserContent(loop.messages, [{ type: 'text', text }]);
  }
  await notes.delivered();
}

/** What a fork started by this model call repeats: the request as sent, and the calls it makes. */
function forkBaseOf(loop: LoopState, requestMessages: MessageParam[]): ForkBase {
  const { params } = loop;
  return {
    system: params.system,
    tools: loop.base.tools ?? [],
    messages: requestMessages,
    toolUses: [],
    cloneReplacementState: params.context?.cloneReplacementState,
    ...(params.userContext !== undefined ? { userContext: params.userContext } : {}),
  };
}

function newExecutor(loop: LoopState, decisions?: ReadonlyMap<string, UserDecision>): StreamingToolExecutor {
  const env = decisions ? { ...loop.env, decisions } : loop.env;
  const toolContext: ToolUseContext = { ...loop.toolContext, forkBase: () => loop.forkBase };
  const { maxToolConcurrency, leaseHeld, tracing } = loop.params;
  return new StreamingToolExecutor(env, toolContext, {
    maxConcurrency: maxToolConcurrency,
    beforeUnsafeCall: leaseHeld,
    ...(tracing ? { run: tracedToolUse(tracing) } : {}),
  });
}

/** One model call, streamed: text goes out as it comes, each complete tool_use starts at once. */
async function* streamResponse(loop: LoopState, executor: StreamingToolExecutor, messages: MessageParam[]): AsyncGenerator<QueryEvent, Streamed> {
  let partial: ContentBlock[] = [];
  let response: AssistantResponse | undefined;
  const durable = onceDurable(loop.params.logDurable);
  try {
    for await (const event of callModel(modelCallOptions(loop, messages))) {
      if (await durable.failed()) break;
      switch (event.type) {
        case 'text_delta':
          yield { type: 'text_delta', text: event.text };
          break;
        case 'tool_use':
          loop.forkBase?.toolUses.push(event.block);
          // Input that did not parse waits for the whole message: cut off by max_tokens, it is not run.
          if (!hasUnparsableInput(event.block)) executor.addTool(event.block);
          break;
        case 'message':
          response = event.response;
          break;
        case 'tombstone':
          // Tools already started have effects: keep what streamed as a real message instead of
          // retrying. Nothing started: the partial response is void and the retry runs.
          if (executor.size > 0) return { kind: 'failed', error: event.error, partial: event.content };
          yield event;
          break;
        case 'aborted':
          partial = event.content;
          break;
        case 'retry':
          yield event;
          break;
        case 'fallback':
          // The loop stays on the fallback from here on: the primary is overloaded (docs/context.md, "The model call").
          loop.base = { ...loop.base, model: event.to };
          yield event;
          break;
        default:
          assertNever(event, 'model call event');
      }
      for (const p of executor.takeProgress()) yield { type: 'tool_progress', toolUseId: p.toolUseId, toolName: p.toolName, progress: p.progress };
    }
  } catch (err) {
    await durable.failed();
    durable.rethrow();
    if (await compactedAfterTooLong(loop, executor, err)) return { kind: 'compacted' };
    return { kind: 'failed', error: errorMessage(err), partial };
  }
  durable.rethrow();
  return response ? { kind: 'response', response } : { kind: 'failed', error: 'The model stream ended without a message.', partial };
}

/**
 * The barrier of one model call (QueryParams.logDurable): awaited at the call's first event, by
 * when the request has been sent, so the puts behind it overlap its way to the model. A failed
 * put is no model failure: it is thrown out of the loop, which fails the turn. A call that
 * failed before any event waits for it too, so what follows (a retry's tombstone, the end)
 * comes after the items before it.
 */
function onceDurable(logDurable: QueryParams['logDurable']) {
  let waited: Promise<{ error: unknown } | undefined> | undefined;
  let failure: { error: unknown } | undefined;
  return {
    async failed(): Promise<boolean> {
      waited ??= (logDurable?.() ?? Promise.resolve()).then(
        () => undefined,
        (error: unknown) => ({ error }),
      );
      failure = await waited;
      return failure !== undefined;
    },
    rethrow(): void {
      if (failure) throw failure.error;
    },
  };
}

function modelCallOptions(loop: LoopState, messages: MessageParam[]): ModelCallOptions {
  const { params } = loop;
  return {
    client: params.client,
    // With deferred tools, the message naming them goes first (the same bytes in every request).
    request: {
      ...loop.base,
      messages: withUserContext(
        params.registry.deferredToolsMessage ? [params.registry.deferredToolsMessage, ...messages] : withoutToolReferences(messages),
        params.userContext,
      ),
    },
    signal: params.signal,
    maxRetries: params.retry?.maxRetries ?? 0,
    baseDelayMs: params.retry?.baseDelayMs ?? 0,
    fallbackModel: params.retry?.fallbackModel,
  };
}

/** A prompt too long for the window is withheld while one compaction is tried; the original error stands if that fails. */
async function compactedAfterTooLong(loop: LoopState, executor: StreamingToolExecutor, err: unknown): Promise<boolean> {
  const { params } = loop;
  if (!params.context || executor.size > 0 || params.signal.aborted || loop.reactiveCompactTried || !isPromptTooLong(err)) return false;
  loop.reactiveCompactTried = true;
  try {
    loop.messages = await params.context.compactNow(loop.messages, loop.base, params.signal, 'auto');
    return true;
  } catch {
    return false;
  }
}

/** The call produced no whole message: calls it had started are recorded with what streamed before them. */
async function* endWithoutResponse(
  loop: LoopState,
  executor: StreamingToolExecutor,
  failed: Extract<Streamed, { kind: 'failed' }>,
): AsyncGenerator<QueryEvent> {
  const stopReason = loop.params.signal.aborted ? 'aborted' : 'model_error';
  if (executor.size > 0) {
    executor.discard();
    yield assistantEvent(loop, partialAssistantResponse(failed.partial, loop.base.model));
    for await (const event of drain(executor, loop.params.context)) yield event;
  } else if (stopReason === 'aborted' && failed.partial.some((b) => b.type === 'text' && b.text.length > 0)) {
    // Stopped mid-text: what the model said so far stays in the conversation, so the next turn sees it.
    yield assistantEvent(loop, partialAssistantResponse(failed.partial, loop.base.model));
  }
  yield { type: 'done', stopReason, ...(stopReason === 'model_error' ? { error: failed.error } : {}) };
}

/** Records the response, runs what it asked for, and says whether the loop goes on or why it stops. */
async function* afterResponse(
  loop: LoopState,
  executor: StreamingToolExecutor,
  response: AssistantResponse,
): AsyncGenerator<QueryEvent, TurnStopReason | 'next_call'> {
  const { params } = loop;
  yield assistantEvent(loop, response);
  loop.messages.push({ role: 'assistant', content: response.content });
  params.context?.recordUsage(response.usage, loop.messages.length);
  const toolUses = response.content.filter((b): b is ToolUseBlock => b.type === 'tool_use');
  const truncated = truncatedToolUse(response.content, response.stopReason);
  for (const block of toolUses) {
    if (executor.statusOf(block.id) !== undefined) continue;
    if (block === truncated) executor.addSynthetic(block, TRUNCATED_TOOL_USE_TEXT);
    else executor.addTool(block);
  }
  if (toolUses.length === 0) {
    // A response cut off by max_tokens is withheld and resumed, up to the limit.
    if (response.stopReason !== 'max_tokens' || loop.maxTokensRecoveries >= MAX_OUTPUT_TOKENS_RECOVERY_LIMIT) return stopReasonOf(response);
    loop.maxTokensRecoveries += 1;
    yield { type: 'meta_user', text: MAX_OUTPUT_TOKENS_RECOVERY_TEXT };
    loop.messages.push({ role: 'user', content: [{ type: 'text', text: MAX_OUTPUT_TOKENS_RECOVERY_TEXT }] });
    return 'next_call';
  }
  const outcome = yield* collectToolResults(loop, executor);
  if (outcome) return outcome;
  if (params.signal.aborted) return 'aborted';
  if (params.shouldCheckpoint?.()) return 'checkpoint';
  return 'next_call';
}

/** The assistant event, carrying the replacement decisions its request was sent with (a reload re-applies exactly these). */
function assistantEvent(loop: LoopState, response: AssistantResponse): QueryEvent {
  return { type: 'assistant', response, decisions: loop.params.context?.takeDecisions() };
}

/**
 * Yields every result of the executor's calls and appends them to the conversation. Returns a
 * reason to end the turn, if any: a call waits for a person, or a hook asked to stop.
 */
async function* collectToolResults(loop: LoopState, executor: StreamingToolExecutor): AsyncGenerator<QueryEvent, TurnStopReason | undefined> {
  const results: ContentBlockParam[] = [];
  const extras: ContentBlockParam[] = [];
  let waiting = false;
  for await (const event of drain(executor, loop.params.context)) {
    yield event;
    if (event.type === 'tool_result') {
      results.push(event.block);
      extras.push(...event.extra);
    } else if (event.type === 'permission_request' || event.type === 'tool_deferred') waiting = true;
  }
  loop.toolContext = executor.currentContext;
  if (waiting) return 'awaiting_permission';
  appendUserContent(loop.messages, [...results, ...extras]);
  return executor.stopRequested ? 'hook_stopped' : undefined;
}

/** Adds to the last user message when there is one (results of one response belong together). */
/** The messages with `userContext` as the first block of the first (user) message; unchanged without one. */
function withUserContext(messages: MessageParam[], userContext: string | undefined): MessageParam[] {
  const [first, ...rest] = messages;
  if (userContext === undefined || first?.role !== 'user') return messages;
  const content = typeof first.content === 'string' ? [{ type: 'text' as const, text: first.content }] : first.content;
  return [{ role: 'user', content: [{ type: 'text', text: userContext }, ...content] }, ...rest];
}

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
  for await (const update of executor.getRemainingResults()) yield await queryEventOf(update, contextManager);
}

async function queryEventOf(update: ExecutorUpdate, contextManager: ContextManager | undefined): Promise<QueryEvent> {
  switch (update.type) {
    case 'progress':
      return { type: 'tool_progress', toolUseId: update.toolUseId, toolName: update.toolName, progress: update.progress };
    case 'deferred':
      return { type: 'tool_deferred', toolUseId: update.block.id, toolName: update.block.name, input: update.block.input };
    case 'outcome':
      return outcomeEvent(update.block.name, update.outcome, contextManager);
    default:
      return assertNever(update, 'executor update');
  }
}

async function outcomeEvent(toolName: string, outcome: ToolUseOutcome, contextManager: ContextManager | undefined): Promise<QueryEvent> {
  switch (outcome.kind) {
    case 'ask':
      return {
        type: 'permission_request',
        toolUseId: outcome.toolUseId,
        toolName: outcome.toolName,
        input: outcome.input,
        message: outcome.message,
        ...(outcome.interaction ? { interaction: outcome.interaction, waitMs: outcome.waitMs } : {}),
      };
    case 'result': {
      const block = contextManager ? await contextManager.processToolResult(outcome.result, toolName) : outcome.result;
      return { type: 'tool_result', toolName, block, extra: outcome.extra, denied: outcome.denied !== undefined };
    }
    default:
      return assertNever(outcome, 'tool use outcome');
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
