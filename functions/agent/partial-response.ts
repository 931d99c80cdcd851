import type { ContentBlock, TextBlock, ToolUseBlock } from '@anthropic-ai/sdk/resources/messages';
import type { AssistantResponse } from './model-stream.ts';

/**
 * What a model response looked like before its stream broke: the text received so far and the
 * tool_use blocks that were complete (and may already be running), in the order they streamed.
 * It becomes the assistant message so those calls get their results in a valid transcript.
 */
export class PartialResponse {
  private readonly blocks: ContentBlock[] = [];
  private readonly textByIndex = new Map<number, TextBlock>();

  text(index: number, text: string): void {
    const block = this.textByIndex.get(index);
    if (block) {
      block.text += text;
      return;
    }
    const created: TextBlock = { type: 'text', text, citations: null };
    this.textByIndex.set(index, created);
    this.blocks.push(created);
  }

  toolUse(block: ToolUseBlock): void {
    this.blocks.push(block);
  }

  toResponse(model: string): AssistantResponse {
    return {
      id: '',
      model,
      content: [...this.blocks],
      stopReason: null,
      usage: { inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 },
    };
  }
}
