import { z } from 'zod';
import type { Deps } from '../deps/deps.ts';
import { triggerFromDelivery, type GithubTrigger } from '../github-api/github-trigger.ts';
import { followUpFromDelivery } from '../github-api/review-trigger.ts';
import type { Logger } from '../shared/logger.ts';
import { itemKeyOf } from '../stores/github-item-store.ts';
import type { GithubRepoRecord, GithubThreadRecord } from '../stores/github-store.ts';
import { budgetCommand } from './item-budget.ts';
import { recordClosedPullRequest } from './pr-stats.ts';

export type FollowUpDeps = Pick<Deps, 'github' | 'githubItems' | 'clock'>;

/** How many times Stratus tries to fix a PR's failing checks when the repository sets no number. */
export const DEFAULT_CHECK_FIX_ATTEMPTS = 2;

/**
 * The trigger a delivery carries for a connected repository, or why it carries none: issues and
 * their comments as github-trigger.ts reads them (a `budget +…` command included), and on a
 * Stratus pull request its review comments and reviews, its failing checks (when the repository
 * enables fixing them, up to its number of attempts) and its closing, which is recorded.
 */
export async function triggerForDelivery(
  deps: FollowUpDeps,
  d: { event: string; deliveryId: string; payload: unknown },
  repo: GithubRepoRecord,
  log: Logger,
): Promise<{ trigger: GithubTrigger } | { ignored: string }> {
  const followUp = followUpFromDelivery(d.event, d.deliveryId, d.payload, { mention: repo.mention, anyReview: repo.settings?.reviews === 'any' });
  if (!followUp) return withBudgetCommand(triggerFromDelivery(d.event, d.deliveryId, d.payload, repo), d.payload, repo.mention);
  if ('ignored' in followUp) return followUp;
  const number = 'closed' in followUp ? followUp.closed.number : followUp.trigger.number;
  const thread = await stratusPullRequest(deps, repo, number);
  if (!thread) return { ignored: `#${number} is not a pull request Stratus opened` };
  if ('closed' in followUp) {
    await recordClosedPullRequest(deps, { repo, thread, deliveryId: d.deliveryId, ...followUp.closed });
    log.info('Stratus pull request closed; recorded', { number, merged: followUp.closed.merged });
    return { ignored: `pull request ${followUp.closed.merged ? 'merged' : 'closed'}: recorded` };
  }
  if (followUp.trigger.trigger === 'check') return checkAttempt(deps, followUp.trigger, repo, thread);
  return followUp;
}

/** The thread of the issue a Stratus PR came from, when `number` is one (and the connection's tenant's). */
async function stratusPullRequest(deps: FollowUpDeps, repo: GithubRepoRecord, number: number): Promise<GithubThreadRecord | undefined> {
  const thread = await deps.github.getThread({ id: repo.repositoryId ?? -1, fullName: repo.fullName }, number);
  if (!thread || thread.pullRequest?.number !== number) return undefined;
  return thread.tenantId === undefined || thread.tenantId === repo.tenantId ? thread : undefined;
}

/**
 * A failed check suite, check run or workflow run: one attempt per head commit (the three events
 * of one failure start one run), up to the repository's number; the delivery that finds them
 * used up first carries `limitReached`, so the worker says so once.
 */
async function checkAttempt(
  deps: FollowUpDeps,
  trigger: GithubTrigger,
  repo: GithubRepoRecord,
  thread: GithubThreadRecord,
): Promise<{ trigger: GithubTrigger } | { ignored: string }> {
  const settings = repo.settings?.failingChecks;
  if (!settings?.enabled) return { ignored: 'fixing failing checks is off for this repository (settings.failingChecks)' };
  const sha = trigger.checks!.headSha;
  if (thread.headSha && thread.headSha !== sha) return { ignored: `the failed checks ran on ${sha.slice(0, 12)}, not the branch's head` };
  const max = settings.maxAttempts ?? DEFAULT_CHECK_FIX_ATTEMPTS;
  const now = new Date(deps.clock()).toISOString();
  const attempt = await deps.githubItems.claimCheckAttempt(itemKeyOf(thread.threadKey), sha, max, now);
  if (attempt === 'claimed') return { trigger };
  if (attempt === 'limit_noted') return { trigger: { ...trigger, checks: { headSha: sha, limitReached: true } } };
  if (attempt === 'same_commit') return { ignored: `the failed checks of ${sha.slice(0, 12)} are already being fixed` };
  return { ignored: `the ${max} attempts at fixing this pull request's checks are used up` };
}

const commentBody = z.object({ comment: z.object({ body: z.string().nullable() }) });

/** A mention that is a `budget +…` command raises the item's budgets instead of starting work. */
function withBudgetCommand(found: { trigger: GithubTrigger } | { ignored: string }, payload: unknown, mention: string) {
  if ('ignored' in found || found.trigger.trigger !== 'mention') return found;
  const parsed = commentBody.safeParse(payload);
  const raise = parsed.success ? budgetCommand(parsed.data.comment.body ?? '', mention) : undefined;
  return raise ? { trigger: { ...found.trigger, budgetRaise: raise } } : found;
}
