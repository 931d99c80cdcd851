import type { ContentBlock, TextBlock } from '@anthropic-ai/sdk/resources/messages';
import type { AssistantResponse, ModelStreamEvent } from './model-stream.ts';

/**
 * What one attempt of a model call delivered before its stream stopped: the text received so
 * far and the tool_use blocks that were complete (and may already be running), in the order they
 * streamed. `callModel` keeps the only one per attempt and hands its content out with the
 * `tombstone` (a broken stream) or `aborted` event.
 */
export class PartialResponse {
  private readonly blocks: ContentBlock[] = [];
  private readonly textByIndex = new Map<number, TextBlock>();

  /** Whether anything of a message arrived. */
  get started(): boolean {
    return this.blocks.length > 0;
  }

  add(event: ModelStreamEvent): void {
    if (event.type === 'text_delta') this.text(event.index, event.text);
    else if (event.type === 'tool_use') this.blocks.push(event.block);
  }

  content(): ContentBlock[] {
    return this.blocks.map((b) => (b.type === 'text' ? { ...b } : b));
  }

  private text(index: number, text: string): void {
    const block = this.textByIndex.get(index);
    if (block) {
      block.text += text;
      return;
    }
    const created: TextBlock = { type: 'text', text, citations: null };
    this.textByIndex.set(index, created);
    this.blocks.push(created);
  }
}

/** A partial message as the assistant message that records it (so calls it started get results in a valid transcript). */
export function partialAssistantResponse(content: ContentBlock[], model: string): AssistantResponse {
  return {
    id: '',
    model,
    content,
    stopReason: null,
    usage: { inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 },
  };
}
