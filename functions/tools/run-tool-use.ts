import type { ToolResultBlockParam, ToolUseBlock } from '@anthropic-ai/sdk/resources/messages';
import { errorMessage } from '../shared/errors.ts';
import { describeInputIssues } from './input-errors.ts';
import type { ToolContext, Tool } from './tool.ts';
import type { ToolRegistry } from './registry.ts';

/** Longest error text passed to the model; longer ones keep their head and tail. */
export const MAX_ERROR_CHARS = 10_000;

/**
 * One tool call from start to finish. Every way it can fail — unknown tool, bad input, a
 * refusal from validateInput, a throw inside call, a runner failure — becomes an error
 * tool_result; nothing escapes, so every tool_use gets exactly one tool_result.
 */
export async function runToolUse(
  block: Pick<ToolUseBlock, 'id' | 'name' | 'input'>,
  registry: ToolRegistry,
  ctx: Omit<ToolContext, 'toolUseId'>,
): Promise<ToolResultBlockParam> {
  const tool = registry.find(block.name);
  if (!tool) return errorResult(block.id, `<tool_use_error>Error: No such tool available: ${block.name}</tool_use_error>`);
  const parsed = tool.inputSchema.safeParse(block.input);
  if (!parsed.success) return errorResult(block.id, `<tool_use_error>${describeInputIssues(tool.name, parsed.error)}</tool_use_error>`);
  const callCtx: ToolContext = { ...ctx, toolUseId: block.id };
  try {
    const validation = await tool.validateInput(parsed.data, callCtx);
    if (!validation.ok) return errorResult(block.id, `<tool_use_error>${validation.message}</tool_use_error>`);
    if (ctx.signal.aborted) return errorResult(block.id, interruptedText(tool));
    const result = await tool.call(parsed.data, callCtx);
    return tool.mapToolResultToToolResultBlockParam(result.data, block.id);
  } catch (err) {
    ctx.log.warn('tool call failed', { tool: tool.name, toolUseId: block.id, error: errorMessage(err) });
    return errorResult(block.id, truncateMiddle(errorMessage(err), MAX_ERROR_CHARS));
  }
}

export function errorResult(toolUseId: string, content: string): ToolResultBlockParam {
  return { type: 'tool_result', tool_use_id: toolUseId, content, is_error: true };
}

function interruptedText(tool: Tool): string {
  return `<tool_use_error>The ${tool.name} call was not run: the turn was interrupted.</tool_use_error>`;
}

function truncateMiddle(text: string, max: number): string {
  if (text.length <= max) return text;
  const half = Math.floor(max / 2);
  return `${text.slice(0, half)}\n\n... [${text.length - max} characters truncated] ...\n\n${text.slice(-half)}`;
}
