import type { ToolUseBlock } from '@anthropic-ai/sdk/resources/messages';
import type { ToolRegistry } from '../registry.ts';

/** Most concurrency-safe calls run at once unless configured otherwise. */
export const DEFAULT_MAX_TOOL_CONCURRENCY = 10;

/**
 * Whether this call may run alongside others, decided on its parsed input. Unknown tools,
 * input that does not parse and a throwing `isConcurrencySafe` all mean "not safe".
 */
export function isCallConcurrencySafe(pool: ToolRegistry, block: Pick<ToolUseBlock, 'name' | 'input'>): boolean {
  const tool = pool.find(block.name);
  if (!tool) return false;
  const parsed = tool.inputSchema.safeParse(block.input);
  if (!parsed.success) return false;
  try {
    return Boolean(tool.isConcurrencySafe(parsed.data));
  } catch {
    return false;
  }
}
