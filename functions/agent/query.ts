import type Anthropic from '@anthropic-ai/sdk';
import type { MessageParam, ToolResultBlockParam, ToolUseBlock } from '@anthropic-ai/sdk/resources/messages';
import { errorMessage } from '../shared/errors.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import { runToolUse } from '../tools/run-tool-use.ts';
import type { ToolContext } from '../tools/tool.ts';
import { streamModel, type AssistantResponse } from './model-stream.ts';

export type TurnStopReason =
  | 'end_turn' | 'max_turns' | 'max_tokens' | 'stop_sequence' | 'refusal' | 'pause_turn' | 'aborted' | 'model_error'
  /** The invocation is near its deadline; the turn continues in a fresh one. */
  | 'checkpoint';

export type QueryEvent =
  | { type: 'text_delta'; text: string }
  | { type: 'assistant'; response: AssistantResponse }
  | { type: 'tool_result'; toolName: string; block: ToolResultBlockParam }
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
  /** Asked between rounds (after tool results): true means stop here and continue elsewhere. */
  shouldCheckpoint?: () => boolean;
}

/**
 * The query loop: call the model, run the tools it asked for, feed the results back, until it
 * stops asking or a bound is hit. It only yields; persisting, streaming to clients and logging
 * are consumers of these events. Every tool_use in a yielded assistant message is followed by
 * exactly one yielded tool_result, whatever happens to the tool.
 */
export async function* query(params: QueryParams): AsyncGenerator<QueryEvent> {
  const messages = [...params.messages];
  const tools = params.registry.toApiTools();

  for (let call = 1; ; call++) {
    if (params.signal.aborted) return yield { type: 'done', stopReason: 'aborted' };
    let response: AssistantResponse | undefined;
    try {
      const stream = streamModel(
        params.client,
        { model: params.model, max_tokens: params.maxTokens, system: params.system, messages, tools },
        params.signal,
      );
      for await (const event of stream) {
        if (event.type === 'text_delta') yield { type: 'text_delta', text: event.text };
        else if (event.type === 'message') response = event.response;
      }
    } catch (err) {
      if (params.signal.aborted) return yield { type: 'done', stopReason: 'aborted' };
      return yield { type: 'done', stopReason: 'model_error', error: errorMessage(err) };
    }
    if (!response) return yield { type: 'done', stopReason: 'model_error', error: 'The model stream ended without a message.' };
    yield { type: 'assistant', response };
    messages.push({ role: 'assistant', content: response.content });

    const toolUses = response.content.filter((b): b is ToolUseBlock => b.type === 'tool_use');
    if (toolUses.length === 0) return yield { type: 'done', stopReason: stopReasonOf(response) };

    const results: ToolResultBlockParam[] = [];
    for (const block of toolUses) {
      const result = await runToolUse(block, params.registry, params.toolContext);
      results.push(result);
      yield { type: 'tool_result', toolName: block.name, block: result };
    }
    messages.push({ role: 'user', content: results });
    if (params.signal.aborted) return yield { type: 'done', stopReason: 'aborted' };
    if (call >= params.maxTurns) return yield { type: 'done', stopReason: 'max_turns' };
    if (params.shouldCheckpoint?.()) return yield { type: 'done', stopReason: 'checkpoint' };
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
