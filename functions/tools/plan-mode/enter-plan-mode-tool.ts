import { z } from 'zod';
import { buildTool, ToolError } from '../tool.ts';
import { ENTER_PLAN_MODE_PROMPT, ENTERED_PLAN_MODE_TEXT } from './enter-plan-mode-prompt.ts';

export const ENTER_PLAN_MODE_TOOL_NAME = 'EnterPlanMode';

/** The reference's error for a sub-agent, which has no plan mode of its own. */
export const AGENT_CONTEXT_ERROR = 'EnterPlanMode tool cannot be used in agent contexts';

export const enterPlanModeTool = buildTool({
  name: ENTER_PLAN_MODE_TOOL_NAME,
  inputSchema: z.strictObject({}),
  description: ENTER_PLAN_MODE_PROMPT,
  maxResultSizeChars: 100_000,
  searchHint: 'switch to plan mode to design an approach before coding',
  isReadOnly: () => true,
  isConcurrencySafe: () => true,
  // Entering plan mode only narrows what the agent may do (every call that changes something is
  // refused until a person approves a plan), so it needs no permission, in any mode.
  checkPermissions: async () => ({ behavior: 'allow' as const }),
  async call(_input, ctx): Promise<{ data: { message: string } }> {
    if (!ctx.permissionMode) throw new ToolError(AGENT_CONTEXT_ERROR);
    await ctx.permissionMode.set('plan');
    return { data: { message: ENTERED_PLAN_MODE_TEXT } };
  },
  mapToolResultToToolResultBlockParam(output: { message: string }, toolUseId) {
    return { type: 'tool_result', tool_use_id: toolUseId, content: output.message };
  },
});
