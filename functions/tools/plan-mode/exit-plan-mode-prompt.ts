/**
 * ExitPlanMode's description: the reference's text (Claude Code 2.1.88), except "How This Tool
 * Works". The reference reads the plan from a file its harness names; a Stratus session has no
 * such file (plan mode refuses every write), so the plan travels in the call's `plan` field.
 */
export const EXIT_PLAN_MODE_PROMPT = `Use this tool when you are in plan mode and have finished your plan and are ready for user approval.

## How This Tool Works
- Pass your whole plan, in Markdown, as the \`plan\` parameter
- This tool simply signals that you're done planning and ready for the user to review and approve
- The user will see your plan when they review it; they may approve it as it is, edit it, or reject it with feedback
- The session waits until they answer; it costs nothing meanwhile

## When to Use This Tool
IMPORTANT: Only use this tool when the task requires planning the implementation steps of a task that requires writing code. For research tasks where you're gathering information, searching files, reading files or in general trying to understand the codebase - do NOT use this tool.

## Before Using This Tool
Ensure your plan is complete and unambiguous:
- If you have unresolved questions about requirements or approach, use AskUserQuestion first (in earlier phases)
- Once your plan is finalized, use THIS tool to request approval

**Important:** Do NOT use AskUserQuestion to ask "Is this plan okay?" or "Should I proceed?" - that's exactly what THIS tool does. ExitPlanMode inherently requests user approval of your plan.

## Examples

1. Initial task: "Search for and understand the implementation of vim mode in the codebase" - Do not use the exit plan mode tool because you are not planning the implementation steps of a task.
2. Initial task: "Help me implement yank mode for vim" - Use the exit plan mode tool after you have finished planning the implementation steps of the task.
3. Initial task: "Add a new feature to handle user authentication" - If unsure about auth method (OAuth, JWT, etc.), use AskUserQuestion first, then use exit plan mode tool after clarifying the approach.
`;

/** The reference's texts, word for word. */
export const NOT_IN_PLAN_MODE_MESSAGE =
  'You are not in plan mode. This tool is only for exiting plan mode after writing a plan. If your plan was already approved, continue with implementation.';

export const APPROVED_EMPTY_PLAN_TEXT = 'User has approved exiting plan mode. You can now proceed.';

export const AGENT_PLAN_APPROVED_TEXT = 'User has approved the plan. There is nothing else needed from you now. Please respond with "ok"';

/** The reference's approval text; `savedAt` says where the plan is kept (the reference names its plan file). */
export function approvedPlanText(plan: string, savedAt: string, edited: boolean): string {
  return `User has approved your plan. You can now start coding. Start with updating your todo list if applicable

Your plan has been saved to: ${savedAt}
You can refer back to it if needed during implementation.

## ${edited ? 'Approved Plan (edited by user)' : 'Approved Plan'}:
${plan}`;
}

/** Stratus's own text where no one can approve (an unattended session): the session stays in plan mode. */
export const NO_ONE_TO_APPROVE_MESSAGE =
  'No one can approve a plan in this session (it runs unattended), so it stays in plan mode and nothing may be changed. ' +
  'End your turn with the plan as your answer: what you would change and how, for a person to act on.';
