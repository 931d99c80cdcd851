import type { Octokit } from '@octokit/rest';
import type { Deps } from '../deps/deps.ts';
import type { GithubTrigger } from '../github-api/github-trigger.ts';
import type { PermissionMode } from '../permissions/types.ts';
import { decidePlan, type PlanAnswer } from '../session/plan-approval.ts';
import type { PendingApproval } from '../stores/approval-store.ts';
import type { PlanApprovalMode } from '../tools/plan-mode/exit-plan-mode-tool.ts';
import { stripHiddenContent } from './untrusted-text.ts';

/** The longest plan a comment shows (GitHub takes 65,536 characters in a comment). */
const MAX_PLAN_CHARS = 60_000;

/** The plan a run's session waits on (ExitPlanMode), if any. */
export async function waitingPlan(deps: Pick<Deps, 'approvals'>, sessionId: string): Promise<PendingApproval | undefined> {
  return (await deps.approvals.listForSession(sessionId)).find((p) => p.kind === 'plan' && p.decision === undefined);
}

/**
 * The comment that shows a "plan first" run's plan and how to answer it. The plan is the model's
 * text: hidden content is stripped and mentions cannot notify anyone.
 */
export function planCommentText(plan: string, mention: string, sessionId: string): string {
  const shown = stripHiddenContent(plan)
    .slice(0, MAX_PLAN_CHARS)
    .replace(/@(?=[\w-])/g, '@\u2060');
  return [
    `**Plan for approval** (session \`${sessionId}\`). Nothing is changed until a writer answers:`,
    '',
    shown.trim() === '' ? '_(The agent gave no plan text.)_' : shown,
    '',
    '---',
    `Reply \`${mention} approve\` to go ahead with this plan, or \`${mention} reject\` followed by what to change.`,
  ].join('\n');
}

/**
 * A writer's reply to a plan: the comment's first word after the mention. `approve` (or `lgtm`,
 * `yes`) approves and the run goes on in the repository's mode; anything else rejects, with the
 * rest of the comment (or the whole of it) as what the agent is told to change.
 */
export function planAnswerFromComment(body: string, mention: string, mode: PermissionMode): PlanAnswer {
  const text = stripHiddenContent(body).split(mention).join(' ').trim();
  const [first = '', ...rest] = text.split(/\s+/);
  if (/^(approve[ds]?|lgtm|yes)[.!]?$/i.test(first)) return { decision: 'approve', mode: approvalMode(mode) };
  const feedback = (/^reject(ed)?[.:!]?$/i.test(first) ? rest.join(' ') : text).trim();
  return { decision: 'reject', ...(feedback ? { feedback: feedback.slice(0, 10_000) } : {}) };
}

/** The mode the run goes on in once its plan is approved: the repository's, never plan mode again. */
function approvalMode(mode: PermissionMode): PlanApprovalMode {
  return mode === 'plan' ? 'default' : mode;
}

/** Decides the waiting plan from the comment that triggered this run; true when the turn may resume now. */
export async function decidePlanFromComment(
  deps: Pick<Deps, 'approvals' | 'clock'>,
  o: { gh: Octokit; trigger: GithubTrigger; mention: string; mode: PermissionMode; plan: PendingApproval },
): Promise<boolean> {
  const { trigger } = o;
  const body =
    trigger.commentId === undefined
      ? ''
      : ((await o.gh.rest.issues.getComment({ owner: trigger.owner, repo: trigger.name, comment_id: trigger.commentId })).data.body ?? '');
  const waiting = await decidePlan(deps, o.plan.sessionId, o.plan.toolUseId, planAnswerFromComment(body, o.mention, o.mode));
  return waiting.length === 0;
}
