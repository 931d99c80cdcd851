import type Anthropic from '@anthropic-ai/sdk';
import type { ContentBlockParam, MessageParam, ToolResultBlockParam, ToolUseBlock } from '@anthropic-ai/sdk/resources/messages';
import type { HookDefinition } from '../hooks/types.ts';
import type { PermissionContext } from '../permissions/types.ts';
import { errorMessage } from '../shared/errors.ts';
import { StreamingToolExecutor } from '../tools/execution/streaming-executor.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import type { ToolUseEnv, UserDecision } from '../tools/run-tool-use.ts';
import type { ToolUseContext } from '../tools/tool.ts';
import { streamModel, type AssistantResponse } from './model-stream.ts';
import { PartialResponse } from './partial-response.ts';

export type TurnStopReason =
  | 'end_turn'
  | 'max_turns'
  | 'max_tokens'
  | 'stop_sequence'
  | 'refusal'
  | 'pause_turn'
  | 'aborted'
  | 'model_error'
  /** A call needs a person's answer; the turn resumes when it arrives. */
  | 'awaiting_permission'
  /** A hook asked to end the turn. */
  | 'hook_stopped'
  /** The invocation nears its deadline; the turn continues in a fresh one. */
  | 'checkpoint';

export type QueryEvent =
  | { type: 'text_delta'; text: string }
  | { type: 'assistant'; response: AssistantResponse }
  | { type: 'tool_progress'; toolUseId: string; toolName: string; progress: unknown }
  /** `extra` goes to the model after the result (hook context, the tool's newMessages). */
  | { type: 'tool_result'; toolName: string; block: ToolResultBlockParam; extra: ContentBlockParam[]; denied: boolean }
  | { type: 'permission_request'; toolUseId: string; toolName: string; input: unknown; message: string }
  | { type: 'tool_deferred'; toolUseId: string; toolName: string; input: unknown }
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
}

/**
 * The query loop: call the model, run the tools it asks for while it streams, feed the results
 * back, until it stops asking or a bound is hit. It only yields; persisting, streaming to
 * clients and logging are consumers of these events. Every tool_use in a yielded assistant
 * message is followed by exactly one yielded tool_result — or, for a call waiting on a person,
 * a permission_request / tool_deferred that the resumed turn answers.
 */
export async function* query(params: QueryParams): AsyncGenerator<QueryEvent> {
  const messages = [...params.messages];
  const tools = params.registry.toApiTools();
  const env: ToolUseEnv = { pool: params.registry, permissions: params.permissions, hooks: params.hooks ?? [] };
  let context = params.toolContext;

  if (params.resume && params.resume.blocks.length > 0) {
    const executor = new StreamingToolExecutor({ ...env, decisions: params.resume.decisions }, context, { maxConcurrency: params.maxToolConcurrency });
    for (const block of params.resume.blocks) executor.addTool(block);
    const outcome = yield* collectToolResults(executor, messages);
    context = executor.currentContext;
    if (outcome) return yield { type: 'done', stopReason: outcome };
  }

  for (let call = 1; ; call++) {
    if (params.signal.aborted) return yield { type: 'done', stopReason: 'aborted' };

    // Tools start at their content_block_stop, while the rest of the response streams.
    const executor = new StreamingToolExecutor(env, context, { maxConcurrency: params.maxToolConcurrency });
    const partial = new PartialResponse();
    let response: AssistantResponse | undefined;
    let streamError: string | undefined;
    try {
      const stream = streamModel(params.client, { model: params.model, max_tokens: params.maxTokens, system: params.system, messages, tools }, params.signal);
      for await (const event of stream) {
        if (event.type === 'text_delta') {
          partial.text(event.index, event.text);
          yield { type: 'text_delta', text: event.text };
        } else if (event.type === 'tool_use') {
          partial.toolUse(event.block);
          executor.addTool(event.block);
        } else response = event.response;
        for (const p of executor.takeProgress()) yield { type: 'tool_progress', toolUseId: p.toolUseId, toolName: p.toolName, progress: p.progress };
      }
      if (!response) streamError = 'The model stream ended without a message.';
    } catch (err) {
      streamError = errorMessage(err);
    }

    if (!response) {
      const stopReason = params.signal.aborted ? 'aborted' : 'model_error';
      if (executor.size > 0) {
        // Calls already started have effects: record them with the text that preceded them.
        executor.discard();
        yield { type: 'assistant', response: partial.toResponse(params.model) };
        for await (const _ of drain(executor)) yield _;
      }
      return yield { type: 'done', stopReason, ...(stopReason === 'model_error' ? { error: streamError } : {}) };
    }

    yield { type: 'assistant', response };
    messages.push({ role: 'assistant', content: response.content });
    const toolUses = response.content.filter((b): b is ToolUseBlock => b.type === 'tool_use');
    for (const block of toolUses) if (executor.statusOf(block.id) === undefined) executor.addTool(block);
    if (toolUses.length === 0) return yield { type: 'done', stopReason: stopReasonOf(response) };

    const outcome = yield* collectToolResults(executor, messages);
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
async function* collectToolResults(executor: StreamingToolExecutor, messages: MessageParam[]): AsyncGenerator<QueryEvent, TurnStopReason | undefined> {
  const results: ContentBlockParam[] = [];
  const extras: ContentBlockParam[] = [];
  let waiting = false;
  for await (const event of drain(executor)) {
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

/** The executor's updates as query events, in call order. */
async function* drain(executor: StreamingToolExecutor): AsyncGenerator<QueryEvent> {
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
      yield { type: 'tool_result', toolName: update.block.name, block: o.result, extra: o.extra, denied: o.denied !== undefined };
    }
  }
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
