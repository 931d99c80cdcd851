import type { ContentBlockParam, MessageParam, ToolResultBlockParam } from '@anthropic-ai/sdk/resources/messages';
import type { StoredMessage } from '../stores/message-store.ts';

/** Text of the synthetic result given to a tool_use whose result was never written. */
export const MISSING_RESULT_TEXT =
  '<tool_use_error>This tool call did not complete: the turn that ran it ended unexpectedly before its result was saved. ' +
  'Its effects, if any, may be partial; check the workspace before relying on them.</tool_use_error>';

/**
 * The log as the Messages API wants it: stored messages are one per model response or tool
 * result, so consecutive user-role messages merge into one, with tool_result blocks first.
 */
export function toApiMessages(log: readonly Pick<StoredMessage, 'role' | 'content'>[]): MessageParam[] {
  const out: MessageParam[] = [];
  for (const message of log) {
    const last = out[out.length - 1];
    if (last && last.role === message.role && message.role === 'user') {
      last.content = orderToolResultsFirst([...(last.content as ContentBlockParam[]), ...message.content]);
    } else {
      out.push({ role: message.role, content: [...message.content] });
    }
  }
  return out;
}

function orderToolResultsFirst(blocks: ContentBlockParam[]): ContentBlockParam[] {
  return [...blocks.filter((b) => b.type === 'tool_result'), ...blocks.filter((b) => b.type !== 'tool_result')];
}

/**
 * tool_use ids in the log that have no tool_result after them: what a crash mid-tool leaves.
 * They get synthetic error results before the next prompt so the transcript stays valid.
 */
export function danglingToolUses(log: readonly Pick<StoredMessage, 'role' | 'content'>[]): string[] {
  const open = new Map<string, true>();
  for (const message of log) {
    for (const block of message.content) {
      if (block.type === 'tool_use') open.set(block.id, true);
      else if (block.type === 'tool_result') open.delete(block.tool_use_id);
    }
  }
  return [...open.keys()];
}

export function syntheticResults(toolUseIds: string[]): ToolResultBlockParam[] {
  return toolUseIds.map((id) => ({ type: 'tool_result', tool_use_id: id, content: MISSING_RESULT_TEXT, is_error: true }));
}
