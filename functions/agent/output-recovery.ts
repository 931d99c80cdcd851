import type { ContentBlock, ToolUseBlock } from '@anthropic-ai/sdk/resources/messages';

/** Times one turn answers a response cut off by max_tokens with "resume" before surfacing it. */
export const MAX_OUTPUT_TOKENS_RECOVERY_LIMIT = 3;

/** The resume message after a response hit the output limit (docs/context.md, "The model call"). */
export const MAX_OUTPUT_TOKENS_RECOVERY_TEXT =
  'Output token limit hit. Resume directly — no apology, no recap of what you were doing. ' +
  'Pick up mid-thought if that is where the cut happened. Break remaining work into smaller pieces.';

export const TRUNCATED_TOOL_USE_TEXT =
  '<tool_use_error>The output token limit was hit while this tool call was being written, so its input is incomplete and it was not run. ' +
  'Call the tool again, breaking large inputs into smaller pieces.</tool_use_error>';

/**
 * A tool_use cut off by max_tokens: the last block of a response that stopped on the limit.
 * Its input is whatever JSON had streamed; running it would act on half an instruction.
 */
export function truncatedToolUse(content: readonly ContentBlock[], stopReason: string | null): ToolUseBlock | undefined {
  if (stopReason !== 'max_tokens') return undefined;
  const last = content[content.length - 1];
  return last?.type === 'tool_use' ? last : undefined;
}
