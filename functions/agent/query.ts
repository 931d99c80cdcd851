import type Anthropic from '@anthropic-ai/sdk';
import type { ContentBlock, MessageParam, ToolResultBlockParam, ToolUseBlock } from '@anthropic-ai/sdk/resources/messages';
import type { ContextManager } from '../context/context-manager.ts';
import { errorMessage } from '../shared/errors.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import { runToolUse } from '../tools/run-tool-use.ts';
import type { ToolContext } from '../tools/tool.ts';
import { callModel, isPromptTooLong } from './model-call.ts';
import type { AssistantResponse } from './model-stream.ts';
import { MAX_OUTPUT_TOKENS_RECOVERY_LIMIT, MAX_OUTPUT_TOKENS_RECOVERY_TEXT, truncatedToolUse, truncatedToolUseResult } from './output-recovery.ts';

export type TurnStopReason = 'end_turn' | 'max_turns' | 'max_tokens' | 'stop_sequence' | 'refusal' | 'pause_turn' | 'aborted' | 'model_error';

export type QueryEvent =
  | { type: 'text_delta'; text: string }
  | { type: 'assistant'; response: AssistantResponse }
  | { type: 'tool_result'; toolName: string; block: ToolResultBlockParam }
  /** A partial response discarded by a broken stream (recorded, never sent again). */
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
  /** The conversation so far, API-shaped, ending with the user's prompt. */
  messages: MessageParam[];
  registry: ToolRegistry;
  toolContext: Omit<ToolContext, 'toolUseId'>;
  /** Most model calls one turn may make. */
  maxTurns: number;
  signal: AbortSignal;
  /** context: the context economy (budget, persistence, compaction); absent = messages go out as they are. */
  context?: ContextManager;
  /** context: our retries (the SDK's are off) and the fallback model. */
  retry?: { maxRetries: number; baseDelayMs: number; fallbackModel?: string };
}

/**
 * The query loop: call the model, run the tools it asked for, feed the results back, until it
 * stops asking or a bound is hit. It only yields; persisting, streaming to clients and logging
 * are consumers of these events. Every tool_use in a yielded assistant message is followed by
 * exactly one yielded tool_result, whatever happens to the tool.
 */
export async function* query(params: QueryParams): AsyncGenerator<QueryEvent> {
  let messages = [...params.messages];
  const tools = params.registry.toApiTools();
  let maxTokensRecoveries = 0;
  let reactiveCompactTried = false;
  const base = { model: params.model, max_tokens: params.maxTokens, system: params.system, tools };

  for (let call = 1; ; call++) {
    if (params.signal.aborted) return yield { type: 'done', stopReason: 'aborted' };
    let response: AssistantResponse | undefined;
    // context: compaction, micro-compaction and the replacement budget, decided (and recorded) before the request.
    let requestMessages = messages;
    if (params.context) {
      const prepared = await params.context.prepare(messages, base, params.signal);
      messages = prepared.history;
      requestMessages = prepared.messages;
    }
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
        if (event.type === 'text_delta') yield { type: 'text_delta', text: event.text };
        else if (event.type === 'message') response = event.response;
        else if (event.type === 'tombstone' || event.type === 'retry') yield event;
      }
    } catch (err) {
      if (params.signal.aborted) return yield { type: 'done', stopReason: 'aborted' };
      // context: a prompt too long for the window is withheld while one compaction is tried.
      if (params.context && !reactiveCompactTried && isPromptTooLong(err)) {
        reactiveCompactTried = true;
        try {
          messages = await params.context.compactNow(messages, base, params.signal, 'auto');
          call -= 1;
          continue;
        } catch {
          // Fall through: the original error is the one to report.
        }
      }
      return yield { type: 'done', stopReason: 'model_error', error: errorMessage(err) };
    }
    if (!response) return yield { type: 'done', stopReason: 'model_error', error: 'The model stream ended without a message.' };
    yield { type: 'assistant', response };
    messages.push({ role: 'assistant', content: response.content });
    params.context?.recordUsage(response.usage, messages.length); // context: measured tokens

    const toolUses = response.content.filter((b): b is ToolUseBlock => b.type === 'tool_use');
    if (toolUses.length === 0) {
      // context: a response cut off by max_tokens is withheld and resumed, up to the limit.
      if (response.stopReason === 'max_tokens' && maxTokensRecoveries < MAX_OUTPUT_TOKENS_RECOVERY_LIMIT && call < params.maxTurns) {
        maxTokensRecoveries += 1;
        yield { type: 'meta_user', text: MAX_OUTPUT_TOKENS_RECOVERY_TEXT };
        messages.push({ role: 'user', content: [{ type: 'text', text: MAX_OUTPUT_TOKENS_RECOVERY_TEXT }] });
        continue;
      }
      return yield { type: 'done', stopReason: stopReasonOf(response) };
    }

    const truncated = truncatedToolUse(response.content, response.stopReason); // context: cut off mid tool call
    const results: ToolResultBlockParam[] = [];
    for (const block of toolUses) {
      let result = block === truncated ? truncatedToolUseResult(block.id) : await runToolUse(block, params.registry, params.toolContext);
      if (params.context) result = await params.context.processToolResult(result, block.name); // context: persist large results
      results.push(result);
      yield { type: 'tool_result', toolName: block.name, block: result };
    }
    messages.push({ role: 'user', content: results });
    if (params.signal.aborted) return yield { type: 'done', stopReason: 'aborted' };
    if (call >= params.maxTurns) return yield { type: 'done', stopReason: 'max_turns' };
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
