import type { Deps } from '../deps/deps.ts';
import { NotFoundError } from '../shared/errors.ts';
import { EXIT_PLAN_MODE_TOOL_NAME, type PlanApprovalMode } from '../tools/plan-mode/exit-plan-mode-tool.ts';
import { QuestionAlreadyAnsweredError, waitsForPerson, type PendingApproval } from '../stores/approval-store.ts';

type PlanDeps = Pick<Deps, 'approvals' | 'clock'>;

/** What a person sends for a waiting plan: approve it (as it is, or edited; in a mode) or reject it (with what to change). */
export type PlanAnswer = { decision: 'approve'; plan?: string; mode?: PlanApprovalMode } | { decision: 'reject'; feedback?: string };

/** The plan of an ExitPlanMode call, as the model wrote it ('' when it gave none). */
export function planOf(item: Pick<PendingApproval, 'input'>): string {
  const { plan } = item.input as { plan?: unknown };
  return typeof plan === 'string' ? plan : '';
}

/** A plan as the API shows it: waiting, or how a person decided (kept until the session goes). */
export function planView(p: PendingApproval) {
  const status = p.decision === undefined ? 'waiting' : p.decision === 'deny' ? 'rejected' : 'approved';
  const approved = p.decision === 'allow' ? (p.updatedInput as { plan?: unknown; approvedMode?: string } | undefined) : undefined;
  return {
    toolUseId: p.toolUseId,
    turnId: p.turnId,
    plan: planOf(p),
    status,
    createdAt: p.createdAt,
    decidedAt: p.decidedAt ?? null,
    approvedPlan: typeof approved?.plan === 'string' ? approved.plan : null,
    mode: approved?.approvedMode ?? null,
    feedback: p.feedback ?? null,
  } as const;
}

/** A plan of that id, waiting or decided: undefined when the session has none. */
export async function findPlan(deps: Pick<Deps, 'approvals'>, sessionId: string, toolUseId: string): Promise<PendingApproval | undefined> {
  const item = await deps.approvals.get(sessionId, toolUseId);
  return item && (item.kind === 'plan' || (item.kind === 'answered' && item.toolName === EXIT_PLAN_MODE_TOOL_NAME)) ? item : undefined;
}

/** The waiting plan of that id: 404 when there is none, 409 when it was decided already. */
async function waitingPlan(deps: PlanDeps, sessionId: string, toolUseId: string): Promise<PendingApproval> {
  const item = await findPlan(deps, sessionId, toolUseId);
  if (!item) throw new NotFoundError(`No plan ${toolUseId} waits for approval in session ${sessionId}.`);
  if (item.kind === 'answered' || item.decision !== undefined) throw new QuestionAlreadyAnsweredError(toolUseId);
  return item;
}

/**
 * Records a person's decision on a waiting plan with a conditional write, so one decision wins
 * whichever instance gets several. An approval adds what the tool reads back (the plan as
 * approved, whether it was edited, the mode to continue in) to the call's input; a rejection
 * keeps the session in plan mode and gives the model the person's words. Returns what still
 * waits for a person: when nothing does, the caller resumes the turn.
 */
export async function decidePlan(deps: PlanDeps, sessionId: string, toolUseId: string, answer: PlanAnswer): Promise<PendingApproval[]> {
  const item = await waitingPlan(deps, sessionId, toolUseId);
  const decidedAt = new Date(deps.clock()).toISOString();
  if (answer.decision === 'reject') {
    await deps.approvals.closeQuestion(
      sessionId,
      toolUseId,
      { decision: 'deny', decidedAt, ...(answer.feedback ? { feedback: answer.feedback } : {}) },
      'plan',
    );
  } else {
    const { approvedMode: _m, planWasEdited: _e, ...input } = item.input as Record<string, unknown>;
    const edited = answer.plan !== undefined && answer.plan !== planOf(item);
    const updatedInput = {
      ...input,
      plan: edited ? answer.plan : planOf(item),
      approvedMode: answer.mode ?? 'default',
      ...(edited ? { planWasEdited: true } : {}),
    };
    await deps.approvals.closeQuestion(sessionId, toolUseId, { decision: 'allow', decidedAt, updatedInput }, 'plan');
  }
  return (await deps.approvals.listForSession(sessionId)).filter(waitsForPerson);
}
