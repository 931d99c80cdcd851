import { rulesForCall, type CallRules } from './call-rules.ts';
import {
  askByRuleMessage,
  askMessage,
  deniedByRuleMessage,
  deniedInPlanModeMessage,
  deniedNoOneToAskMessage,
  partsNeedApprovalMessage,
  rulesUncheckableMessage,
} from './messages.ts';
import type { PermissionCheck, PermissionContext, PermissionDecision, PermissionSubject } from './types.ts';
import type { Logger } from '../shared/logger.ts';

/** What the decision needs of a call's context: somewhere to report a tool that could not decide. */
export interface PermissionCallContext {
  log: Pick<Logger, 'warn'>;
}

/**
 * Decides one call: deny rules win; then ask rules; then the tool's own checkPermissions; then
 * allow rules and the mode. `ask` becomes `deny` when nobody can answer (dontAsk, unattended).
 * A hook's verdict, when there is one, is weighed instead by `withHookVerdict` (tools/run-tool-use.ts).
 */
export async function decidePermission<Ctx extends PermissionCallContext>(
  tool: PermissionSubject<Ctx>,
  input: unknown,
  ctx: Ctx,
  permissions: PermissionContext,
): Promise<PermissionDecision> {
  return finalizeAsk(await decideBeforeAsk(tool, input, ctx, permissions), tool, permissions);
}

async function decideBeforeAsk<Ctx extends PermissionCallContext>(
  tool: PermissionSubject<Ctx>,
  input: unknown,
  ctx: Ctx,
  permissions: PermissionContext,
): Promise<PermissionDecision> {
  const { mode } = permissions;
  const matched = await rulesForCall(permissions.rules, tool, input);
  const guarded = denyOrAskByRule(tool.name, input, matched);
  if (guarded) return guarded;

  let check: PermissionCheck;
  try {
    check = await tool.checkPermissions(input, ctx);
  } catch (err) {
    // A tool that cannot decide has not allowed anything.
    ctx.log.warn('checkPermissions threw; asking instead', { tool: tool.name, error: String(err) });
    check = { behavior: 'ask' };
  }
  if (check.behavior === 'deny') return { behavior: 'deny', message: check.message, reason: { type: 'tool' } };
  if (check.behavior === 'ask') return { behavior: 'ask', message: check.message ?? askMessage(tool.name), reason: { type: 'tool' } };
  const updatedInput = check.behavior === 'allow' ? check.updatedInput : undefined;

  if (mode === 'bypassPermissions') return { behavior: 'allow', updatedInput, reason: { type: 'mode', mode } };
  const allow = matched.allow;
  if (allow) return { behavior: 'allow', updatedInput, reason: { type: 'rule', rule: allow } };
  if (check.behavior === 'allow') return { behavior: 'allow', updatedInput, reason: { type: 'tool' } };

  const readOnly = safely(() => tool.isReadOnly(input));
  if (mode === 'plan') {
    return readOnly
      ? { behavior: 'allow', reason: { type: 'mode', mode } }
      : { behavior: 'deny', message: deniedInPlanModeMessage(tool.name), reason: { type: 'mode', mode } };
  }
  if (readOnly) return { behavior: 'allow', reason: { type: 'mode', mode } };
  if (mode === 'acceptEdits' && tool.editsFiles) return { behavior: 'allow', reason: { type: 'mode', mode } };
  const uncovered = matched.uncovered ?? [];
  const message = matched.compound && uncovered.length > 0 ? partsNeedApprovalMessage(tool.name, uncovered) : askMessage(tool.name);
  return { behavior: 'ask', message, reason: { type: 'mode', mode } };
}

/**
 * What deny and ask rules say of a call, before anything may allow it: a deny rule that matches
 * (any part of a shell command) denies, an ask rule asks, and a shell command whose parts could
 * not all be checked against them is asked about — even in bypassPermissions, where rules still hold.
 */
export function denyOrAskByRule(toolName: string, input: unknown, matched: CallRules): PermissionDecision | undefined {
  const { deny, ask, unsure } = matched;
  if (deny) return { behavior: 'deny', message: deniedByRuleMessage(toolName, input, deny.rule, deny.part), reason: { type: 'rule', rule: deny.rule } };
  if (ask) return { behavior: 'ask', message: askByRuleMessage(toolName, ask.rule, ask.part, matched.compound), reason: { type: 'rule', rule: ask.rule } };
  if (unsure) return { behavior: 'ask', message: rulesUncheckableMessage(toolName, unsure.why, unsure.parts), reason: { type: 'tool' } };
  return undefined;
}

/** `ask` with nobody to answer is `deny`, with a message that says so. */
export function finalizeAsk(decision: PermissionDecision, tool: { name: string }, permissions: PermissionContext): PermissionDecision {
  if (decision.behavior !== 'ask') return decision;
  if (permissions.mode === 'dontAsk' || permissions.unattended) {
    return {
      behavior: 'deny',
      message: deniedNoOneToAskMessage(tool.name),
      reason: { type: 'mode', mode: permissions.mode === 'dontAsk' ? 'dontAsk' : permissions.mode },
    };
  }
  return decision;
}

function safely(fn: () => boolean): boolean {
  try {
    return Boolean(fn());
  } catch {
    return false;
  }
}
