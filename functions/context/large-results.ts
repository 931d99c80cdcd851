import type { ToolResultBlockParam } from '@anthropic-ai/sdk/resources/messages';
import type { Logger } from '../shared/logger.ts';
import type { BlobStore } from '../stores/blob-store.ts';
import { getPersistenceThreshold, type ContextLimits } from './limits.ts';
import { buildLargeToolResultMessage, persistToolResult } from './persisted-output.ts';
import { contentSize } from './replacement-state.ts';

export interface LargeResultDeps {
  blobs: BlobStore;
  sessionId: string;
  limits: ContextLimits;
  log: Logger;
}

/**
 * The last step of a tool call before its result is written: an empty result gets a marker
 * (an empty tool_result at the end of a prompt can make a model end its turn with nothing), and a
 * result over the tool's threshold is persisted to S3 and replaced by a preview and the path to
 * Read. If persisting fails the result goes through unchanged; the budget still bounds it.
 */
export async function processToolResultBlock(
  deps: LargeResultDeps,
  tool: { name: string; maxResultSizeChars: number },
  block: ToolResultBlockParam,
): Promise<ToolResultBlockParam> {
  const content = block.content;
  if (isContentEmpty(content)) return { ...block, content: `(${tool.name} completed with no output)` };
  if (!content) return block;
  if (Array.isArray(content) && content.some((b) => b.type === 'image')) return block;
  const threshold = getPersistenceThreshold(tool.name, tool.maxResultSizeChars, deps.limits);
  if (contentSize(content) <= threshold) return block;
  const persisted = await persistToolResult(deps.blobs, deps.sessionId, block.tool_use_id, content);
  if ('error' in persisted) {
    deps.log.warn('could not persist a large tool result; sending it inline', { toolUseId: block.tool_use_id, error: persisted.error });
    return block;
  }
  return { ...block, content: buildLargeToolResultMessage(persisted) };
}

function isContentEmpty(content: ToolResultBlockParam['content']): boolean {
  if (!content) return true;
  if (typeof content === 'string') return content.trim() === '';
  if (content.length === 0) return true;
  return content.every((b) => b.type === 'text' && b.text.trim() === '');
}
