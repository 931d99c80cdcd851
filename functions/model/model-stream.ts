import type { ModelClient } from './model-client.ts';
import type { ContentBlock, MessageCreateParamsBase, RawMessageStreamEvent, ToolUseBlock, Usage } from '@anthropic-ai/sdk/resources/messages';

/** A completed model response, assembled from the stream. */
export interface AssistantResponse {
  id: string;
  model: string;
  content: ContentBlock[];
  stopReason: string | null;
  usage: { inputTokens: number; outputTokens: number; cacheReadInputTokens: number; cacheCreationInputTokens: number; webSearchRequests?: number };
}

export type ModelStreamEvent =
  | { type: 'text_delta'; index: number; text: string }
  /** A tool_use block is complete (its content_block_stop arrived) while the rest may still stream. */
  | { type: 'tool_use'; block: ToolUseBlock }
  | { type: 'message'; response: AssistantResponse };

export type ModelRequest = Omit<MessageCreateParamsBase, 'stream'>;

/** The API beta that lets tools be loaded on demand (`defer_loading` tools, `tool_reference` results). */
export const TOOL_SEARCH_BETA = 'advanced-tool-use-2025-11-20';

/** A request that loads a tool found by ToolSearch names the beta; every other request is sent as before. */
function betaHeaders(request: ModelRequest): { headers?: Record<string, string> } {
  const deferred = request.tools?.some((t) => (t as { defer_loading?: boolean }).defer_loading === true);
  return deferred ? { headers: { 'anthropic-beta': TOOL_SEARCH_BETA } } : {};
}

/**
 * Streams one Messages API call and assembles the response block by block. A tool_use is
 * emitted the moment its block closes so tools can start before the message ends. If the
 * stream breaks, the SDK's error propagates and no partial message is emitted.
 */
export async function* streamModel(client: ModelClient, request: ModelRequest, signal?: AbortSignal): AsyncGenerator<ModelStreamEvent> {
  const stream = await client.messages.create({ ...request, stream: true }, { signal, ...betaHeaders(request) });
  const state: StreamState = { blocks: [], partialJson: new Map(), id: '', model: request.model, stopReason: null, usage: {} };
  for await (const event of stream) {
    const out = onStreamEvent(state, event);
    if (out) yield out;
  }
  yield { type: 'message', response: responseOf(state) };
}

/** The message as it streams in. */
interface StreamState {
  blocks: ContentBlock[];
  partialJson: Map<number, string>;
  id: string;
  model: string;
  stopReason: string | null;
  usage: Partial<Usage>;
}

/** Folds one SSE event into the message; returns what to yield at once (text, a complete tool_use). */
function onStreamEvent(state: StreamState, event: RawMessageStreamEvent): ModelStreamEvent | undefined {
  switch (event.type) {
    case 'message_start':
      state.id = event.message.id;
      state.model = event.message.model;
      state.usage = { ...event.message.usage };
      return undefined;
    case 'content_block_start':
      state.blocks[event.index] = structuredClone(event.content_block) as ContentBlock;
      if (event.content_block.type === 'tool_use' || event.content_block.type === 'server_tool_use') state.partialJson.set(event.index, '');
      return undefined;
    case 'content_block_delta': {
      const block = state.blocks[event.index];
      if (event.delta.type === 'text_delta' && block?.type === 'text') {
        block.text += event.delta.text;
        return { type: 'text_delta', index: event.index, text: event.delta.text };
      }
      if (event.delta.type === 'input_json_delta') state.partialJson.set(event.index, (state.partialJson.get(event.index) ?? '') + event.delta.partial_json);
      return undefined;
    }
    case 'content_block_stop': {
      const block = state.blocks[event.index];
      // A server tool's call (web search) runs at the provider: its input is kept, nothing is run here.
      if (block?.type === 'server_tool_use') block.input = parseToolInput(state.partialJson.get(event.index) ?? '');
      if (block?.type !== 'tool_use') return undefined;
      block.input = parseToolInput(state.partialJson.get(event.index) ?? '');
      return { type: 'tool_use', block };
    }
    case 'message_delta':
      state.stopReason = event.delta.stop_reason;
      state.usage = { ...state.usage, output_tokens: event.usage.output_tokens };
      if (event.usage.input_tokens != null) state.usage.input_tokens = event.usage.input_tokens;
      if (event.usage.server_tool_use) state.usage.server_tool_use = event.usage.server_tool_use;
      return undefined;
    case 'message_stop':
      return undefined;
  }
}

function responseOf(state: StreamState): AssistantResponse {
  const { usage } = state;
  return {
    id: state.id,
    model: state.model,
    content: state.blocks.filter(Boolean),
    stopReason: state.stopReason,
    usage: {
      inputTokens: usage.input_tokens ?? 0,
      outputTokens: usage.output_tokens ?? 0,
      cacheReadInputTokens: usage.cache_read_input_tokens ?? 0,
      cacheCreationInputTokens: usage.cache_creation_input_tokens ?? 0,
      // Searches the provider ran (and bills per search): only present when there were some.
      ...(usage.server_tool_use?.web_search_requests ? { webSearchRequests: usage.server_tool_use.web_search_requests } : {}),
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
