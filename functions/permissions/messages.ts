import { formatRuleValue } from './rule-syntax.ts';
import type { CommandPart, PermissionRule, RuleSource } from './types.ts';

/**
 * The texts the model reads when a call is refused (the table in docs/tool-pipeline.md, "One
 * call"), kept word for word: they are texts the model already knows how to act on.
 */
export const DENIAL_ADVICE =
  'IMPORTANT: You *may* attempt to accomplish this action using other tools that might naturally be used to accomplish this goal, ' +
  'e.g. using head instead of cat. But you *should not* attempt to work around this denial in malicious ways, e.g. do not use your ' +
  'ability to run tests to execute non-test actions. You should only try to work around this restriction in reasonable ways that do ' +
  "not attempt to bypass the intent behind this denial. If you believe this capability is essential to complete the user's request, " +
  'STOP and explain to the user what you were trying to do and why you need this permission. Let the user decide how to proceed.';

/** A person answered "deny". */
export const USER_REJECTED_MESSAGE =
  "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was " +
  'NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed.';

/**
 * A person answered "deny" and said why (deny-with-feedback): the rejection text
 * with the person's words for the model instead of "wait for the user".
 */
export const USER_REJECTED_WITH_FEEDBACK_PREFIX =
  "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was " +
  'NOT written to the file). To tell you how to proceed, the user said:\n';

export function userRejectedWithFeedback(feedback: string): string {
  return `${USER_REJECTED_WITH_FEEDBACK_PREFIX}${feedback}`;
}

/** A Bash content rule names the command, or the pipeline stage that holds the denied part (docs/security.md, "Bash rules"). */
export function deniedByRuleMessage(toolName: string, input: unknown, rule: PermissionRule, part?: CommandPart): string {
  const command = toolName === 'Bash' && rule.value.content !== undefined ? (part?.segment ?? commandOf(input)) : undefined;
  return command !== undefined ? `Permission to use ${toolName} with command ${command} has been denied.` : `Permission to use ${toolName} has been denied.`;
}

/** Unattended sessions: nobody can answer, so `ask` is refused. */
export function deniedNoOneToAskMessage(toolName: string): string {
  return `Permission to use ${toolName} has been denied because Claude Code is running in don't ask mode. ${DENIAL_ADVICE}`;
}

export function deniedInPlanModeMessage(toolName: string): string {
  return `Permission to use ${toolName} has been denied because the session is in plan mode, where only read-only tools run. ${DENIAL_ADVICE}`;
}

export function askMessage(toolName: string): string {
  return `Claude requested permissions to use ${toolName}, but you haven't granted it yet.`;
}

export function askByRuleMessage(toolName: string, rule: PermissionRule, part?: CommandPart, compound = false): string {
  if (part && compound) return partsNeedApprovalMessage(toolName, [part]);
  return `Permission rule '${formatRuleValue(rule.value)}' from ${SOURCE_NAMES[rule.source]} requires approval for this ${toolName} command`;
}

/** A command of several parts, some of which no rule allows: which ones (docs/security.md, "Bash rules"). */
export function partsNeedApprovalMessage(toolName: string, parts: readonly CommandPart[]): string {
  const names = parts.map((p) => p.text.trim());
  const which = names.length === 1 ? 'part requires' : 'parts require';
  return `This ${toolName} command contains multiple operations. The following ${which} approval: ${names.join(', ')}`;
}

/** Deny or ask rules exist, but what the command runs cannot be checked against them. */
export function rulesUncheckableMessage(toolName: string, why: 'unparsable' | 'unknown', parts: readonly CommandPart[] = []): string {
  if (why === 'unparsable') return `This ${toolName} command could not be parsed, so it cannot be checked against the permission rules; it requires approval.`;
  const names = parts.map((p) => p.text.trim()).join(', ');
  return `This ${toolName} command runs a program that is only known when it runs (${names}), so it cannot be checked against the permission rules; it requires approval.`;
}

const SOURCE_NAMES: Record<RuleSource, string> = {
  policy: 'policy settings',
  project: 'project settings',
  session: 'session settings',
  request: 'request settings',
};

function commandOf(input: unknown): string | undefined {
  const command = (input as { command?: unknown } | null)?.command;
  return typeof command === 'string' ? command : undefined;
}
