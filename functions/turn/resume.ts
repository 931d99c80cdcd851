import type { ToolUseBlock } from '@anthropic-ai/sdk/resources/messages';
import { rulesFromLists } from '../permissions/rule-syntax.ts';
import { ruleToRemember, withRememberedRule, type SessionSettings } from '../session-settings/session-settings.ts';
import { ConflictError } from '../shared/errors.ts';
import { waitsForPerson, type ApprovalStore, type PendingApproval } from '../stores/approval-store.ts';
import type { StoredMessage } from '../stores/message-store.ts';
import type { UserDecision } from '../tools/run-tool-use.ts';

/** A new prompt while calls still wait for answers would leave them dangling: answer them first. */
export class AwaitingPermissionError extends ConflictError {
  constructor(sessionId: string, toolUseIds: string[]) {
    super(
      `Session ${sessionId} is waiting for answers (${toolUseIds.join(', ')}); ` +
        `answer each with POST /v1/sessions/${sessionId}/permissions/{toolUseId} (a permission) POST /v1/sessions/${sessionId}/questions/{toolUseId}/answer (a question) or POST /v1/sessions/${sessionId}/plans/{toolUseId} (a plan).`,
      'awaiting_permission',
    );
  }
}

/** Calls left waiting by an earlier turn, run first with the answers given. */
export interface ResumeCalls {
  blocks: Pick<ToolUseBlock, 'id' | 'name' | 'input'>[];
  decisions: ReadonlyMap<string, UserDecision>;
}

/**
 * The calls that waited, with the answers given. Calls whose result is already in the log (a
 * resumed turn that crashed after running them) are skipped. The waiting items are removed
 * now, under the lease: from here on the log is the record, and a crash leaves dangling
 * tool_uses that the next turn repairs. A remembered "allow" becomes a session rule (the one the
 * person wrote, or the call's own).
 */
export async function prepareResume(
  approvals: Pick<ApprovalStore, 'listForSession' | 'remove' | 'retireQuestion'>,
  sessionId: string,
  log: readonly StoredMessage[],
  settings: SessionSettings | undefined,
): Promise<{ resume: ResumeCalls; settings: SessionSettings | undefined }> {
  const pending = await approvals.listForSession(sessionId);
  const undecided = pending.filter(waitsForPerson);
  if (undecided.length > 0)
    throw new AwaitingPermissionError(
      sessionId,
      undecided.map((p) => p.toolUseId),
    );
  const answered = new Set<string>();
  for (const message of log) for (const block of message.content) if (block.type === 'tool_result') answered.add(block.tool_use_id);
  const decisions = new Map<string, UserDecision>();
  const blocks: ResumeCalls['blocks'] = [];
  let next = settings;
  for (const item of pending) {
    if (answered.has(item.toolUseId)) continue;
    blocks.push({ id: item.toolUseId, name: item.toolName, input: item.input });
    const decision = decisionOf(item);
    if (decision) decisions.set(item.toolUseId, decision);
    if (item.decision === 'allow' && item.remember) next = remembered(next, item);
  }
  for (const item of pending) {
    if (item.kind === 'question' || item.kind === 'plan') await approvals.retireQuestion(sessionId, item.toolUseId);
    else await approvals.remove(sessionId, item.toolUseId);
  }
  return { resume: { blocks, decisions }, settings: next };
}

function decisionOf(item: PendingApproval): UserDecision | undefined {
  if (item.decision === 'deny') return { behavior: 'deny', ...(item.feedback ? { feedback: item.feedback } : {}) };
  if (item.decision === 'allow') return { behavior: 'allow', ...(item.updatedInput !== undefined ? { updatedInput: item.updatedInput } : {}) };
  return undefined;
}

function remembered(settings: SessionSettings | undefined, item: PendingApproval): SessionSettings | undefined {
  const rule = item.rememberRule ?? ruleToRemember(item.toolName, item.updatedInput ?? item.input);
  return rulesFromLists({ allow: [rule] }, 'session').invalid.length === 0 ? withRememberedRule(settings, rule) : settings;
}
