import type { ToolUseBlock } from '@anthropic-ai/sdk/resources/messages';

/**
 * The texts of results the executor makes up for calls that did not run to the end. The
 * unknown-tool and interrupted texts belong to every call and live with `runToolUse`.
 */
export const STREAM_DISCARDED_MESSAGE = '<tool_use_error>Error: Streaming fallback - tool execution discarded</tool_use_error>';

export function siblingErrorMessage(erroredDescription: string): string {
  const text = erroredDescription ? `Cancelled: parallel tool call ${erroredDescription} errored` : 'Cancelled: parallel tool call errored';
  return `<tool_use_error>${text}</tool_use_error>`;
}

/** `Bash(mkdir out && cd out)`: the tool and the start of its main argument (40 characters at most). */
export function describeToolCall(block: Pick<ToolUseBlock, 'name' | 'input'>): string {
  const input = (block.input ?? {}) as Record<string, unknown>;
  const summary = input.command ?? input.file_path ?? input.pattern ?? '';
  if (typeof summary === 'string' && summary.length > 0) {
    return `${block.name}(${summary.length > 40 ? `${summary.slice(0, 40)}…` : summary})`;
  }
  return block.name;
}
