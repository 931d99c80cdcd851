import type Anthropic from '@anthropic-ai/sdk';
import type { ContentBlock, MessageCreateParamsBase, ToolUseBlock, Usage } from '@anthropic-ai/sdk/resources/messages';

/** A completed model response, assembled from the stream. */
export interface AssistantResponse {
  id: string;
  model: string;
  content: ContentBlock[];
  stopReason: string | null;
  usage: { inputTokens: number; outputTokens: number; cacheReadInputTokens: number; cacheCreationInputTokens: number };
}

export type ModelStreamEvent =
  | { type: 'text_delta'; index: number; text: string }
  /** A tool_use block is complete (its content_block_stop arrived) while the rest may still stream. */
  | { type: 'tool_use'; block: ToolUseBlock }
  | { type: 'message'; response: AssistantResponse };

export type ModelRequest = Omit<MessageCreateParamsBase, 'stream'>;

/**
 * Streams one Messages API call and assembles the response block by block. A tool_use is
 * emitted the moment its block closes so tools can start before the message ends. If the
 * stream breaks, the SDK's error propagates and no partial message is emitted.
 */
export async function* streamModel(client: Anthropic, request: ModelRequest, signal?: AbortSignal): AsyncGenerator<ModelStreamEvent> {
  const stream = await client.messages.create({ ...request, stream: true }, { signal });
  const blocks: ContentBlock[] = [];
  const partialJson = new Map<number, string>();
  let id = '';
  let model = request.model;
  let stopReason: string | null = null;
  let usage: Partial<Usage> = {};

  for await (const event of stream) {
    switch (event.type) {
      case 'message_start':
        id = event.message.id;
        model = event.message.model;
        usage = { ...event.message.usage };
        break;
      case 'content_block_start':
        blocks[event.index] = structuredClone(event.content_block) as ContentBlock;
        if (event.content_block.type === 'tool_use') partialJson.set(event.index, '');
        break;
      case 'content_block_delta': {
        const block = blocks[event.index];
        if (event.delta.type === 'text_delta' && block?.type === 'text') {
          block.text += event.delta.text;
          yield { type: 'text_delta', index: event.index, text: event.delta.text };
        } else if (event.delta.type === 'input_json_delta') {
          partialJson.set(event.index, (partialJson.get(event.index) ?? '') + event.delta.partial_json);
        }
        break;
      }
      case 'content_block_stop': {
        const block = blocks[event.index];
        if (block?.type === 'tool_use') {
          block.input = parseToolInput(partialJson.get(event.index) ?? '');
          yield { type: 'tool_use', block };
        }
        break;
      }
      case 'message_delta':
        stopReason = event.delta.stop_reason;
        usage = { ...usage, output_tokens: event.usage.output_tokens };
        if (event.usage.input_tokens != null) usage.input_tokens = event.usage.input_tokens;
        break;
      case 'message_stop':
        break;
    }
  }
  yield {
    type: 'message',
    response: {
      id,
      model,
      content: blocks.filter(Boolean),
      stopReason,
      usage: {
        inputTokens: usage.input_tokens ?? 0,
        outputTokens: usage.output_tokens ?? 0,
        cacheReadInputTokens: usage.cache_read_input_tokens ?? 0,
        cacheCreationInputTokens: usage.cache_creation_input_tokens ?? 0,
      },
    },
  };
}

/**
 * The accumulated input JSON of a tool_use. Invalid JSON (a cut-off stream) is kept as a raw
 * string so input validation reports it to the model instead of crashing the turn.
 */
function parseToolInput(json: string): unknown {
  if (json.trim() === '') return {};
  try {
    return JSON.parse(json);
  } catch {
    return { __unparsable_input: json };
  }
}
