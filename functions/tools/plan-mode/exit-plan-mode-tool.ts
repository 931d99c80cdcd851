import { z } from 'zod';
import { buildTool, ToolError, type ToolContext } from '../tool.ts';
import {
  AGENT_PLAN_APPROVED_TEXT,
  APPROVED_EMPTY_PLAN_TEXT,
  approvedPlanText,
  EXIT_PLAN_MODE_PROMPT,
  NO_ONE_TO_APPROVE_MESSAGE,
  NOT_IN_PLAN_MODE_MESSAGE,
} from './exit-plan-mode-prompt.ts';

export const EXIT_PLAN_MODE_TOOL_NAME = 'ExitPlanMode';

/**
 * The modes a plan's approval may continue in: a person picks default or acceptEdits (the API);
 * a GitHub run's approval goes on in the mode its repository runs in.
 */
const PLAN_APPROVAL_MODES = ['default', 'acceptEdits', 'bypassPermissions', 'dontAsk'] as const;
export type PlanApprovalMode = (typeof PLAN_APPROVAL_MODES)[number];

const allowedPrompt = z.object({
  tool: z.enum(['Bash']).describe('The tool this prompt applies to'),
  prompt: z.string().describe('Semantic description of the action, e.g. "run tests", "install dependencies"'),
});

// Loose, as the reference's: the harness adds what a person decided (see approvalOf) to the input it runs with.
const inputSchema = z.looseObject({
  plan: z.string().optional().describe('Your plan, in Markdown: what you will change and how. The person reviews exactly this.'),
  allowedPrompts: z
    .array(allowedPrompt)
    .optional()
    .describe('Prompt-based permissions needed to implement the plan. These describe categories of actions rather than specific commands.'),
});

export type ExitPlanModeInput = z.output<typeof inputSchema>;

/** What the harness adds to the call's input when a person approves (functions/session/plan-approval.ts). */
const approvalSchema = z.object({ approvedMode: z.enum(PLAN_APPROVAL_MODES), planWasEdited: z.boolean().optional() });
export type PlanApproval = z.output<typeof approvalSchema>;

export type PlanOutcome = { kind: 'agent' } | { kind: 'approved'; plan: string | undefined; edited: boolean; savedAt: string };

/** The approval a person gave, when the call comes back from its wait with one (the model's own fields never count). */
function approvalOf(input: ExitPlanModeInput, ctx: ToolContext): PlanApproval | undefined {
  if (!ctx.resumedInteraction) return undefined;
  const parsed = approvalSchema.safeParse(input);
  return parsed.success ? parsed.data : undefined;
}

export const exitPlanModeTool = buildTool({
  name: EXIT_PLAN_MODE_TOOL_NAME,
  inputSchema,
  description: EXIT_PLAN_MODE_PROMPT,
  maxResultSizeChars: 100_000,
  searchHint: 'present plan for approval and start coding (plan mode only)',
  interaction: 'plan',
  isReadOnly: () => false,
  isConcurrencySafe: () => true,
  // The person's approval is the pipeline's wait (the `plan` interaction), not a permission ask;
  // deny rules by name still apply before this.
  checkPermissions: async () => ({ behavior: 'allow' as const }),
  async validateInput(_input, ctx) {
    if (ctx.permissionMode && ctx.permissionMode.current() !== 'plan') return { ok: false, message: NOT_IN_PLAN_MODE_MESSAGE };
    return { ok: true };
  },
  async call(input, ctx): Promise<{ data: PlanOutcome }> {
    if (!ctx.permissionMode) return { data: { kind: 'agent' } };
    const approval = approvalOf(input, ctx);
    if (!approval) throw new ToolError(NO_ONE_TO_APPROVE_MESSAGE);
    await ctx.permissionMode.set(approval.approvedMode);
    const savedAt = `GET /v1/sessions/${ctx.sessionId}/plans/${ctx.toolUseId}`;
    return { data: { kind: 'approved', plan: input.plan, edited: approval.planWasEdited === true, savedAt } };
  },
  mapToolResultToToolResultBlockParam(output: PlanOutcome, toolUseId) {
    return { type: 'tool_result', tool_use_id: toolUseId, content: resultText(output) };
  },
});

function resultText(output: PlanOutcome): string {
  if (output.kind === 'agent') return AGENT_PLAN_APPROVED_TEXT;
  if (!output.plan || output.plan.trim() === '') return APPROVED_EMPTY_PLAN_TEXT;
  return approvedPlanText(output.plan, output.savedAt, output.edited);
}
