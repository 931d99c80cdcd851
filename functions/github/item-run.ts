import type { Octokit } from '@octokit/rest';
import type { Deps } from '../deps/deps.ts';
import type { GithubTrigger } from '../github-api/github-trigger.ts';
import { itemKeyOf, type GithubItemRecord, type ItemLimits } from '../stores/github-item-store.ts';
import type { GithubRepoRecord, GithubRunRecord } from '../stores/github-store.ts';
import type { SessionRecord } from '../stores/session-store.ts';
import { DEFAULT_CHECK_FIX_ATTEMPTS } from './follow-up-delivery.ts';
import { budgetLine, hasLimits, itemLimits, raiseText, sessionBudgetsFor, spentLimit } from './item-budget.ts';
import type { Cost } from './progress-comment.ts';

type ItemDeps = Pick<Deps, 'githubItems' | 'sessions' | 'clock'>;
type Save = (patch: Partial<GithubRunRecord>) => Promise<GithubRunRecord>;

/** A run's share of its work item's budget: the limits it started under, and the item's count as last read. */
export interface ItemRun {
  itemKey: string;
  limits: ItemLimits;
  item: GithubItemRecord;
}

/**
 * Counts the run against its item, or says which budget is spent (the run then starts nothing).
 * Without limits the run is counted all the same: the item's totals are what the progress
 * comment, the runs list and the statistics show.
 */
export async function startItemRun(deps: ItemDeps, repo: GithubRepoRecord, threadKey: string): Promise<ItemRun | { spent: string }> {
  const itemKey = itemKeyOf(threadKey);
  const before = await deps.githubItems.get(itemKey);
  const limits = itemLimits(repo.settings?.budgets, before);
  if (!(await deps.githubItems.startRun(itemKey, limits, new Date(deps.clock()).toISOString()))) {
    const now = await deps.githubItems.get(itemKey);
    return { spent: spentLimit(itemLimits(repo.settings?.budgets, now), now) ?? 'a budget' };
  }
  return { itemKey, limits, item: await deps.githubItems.get(itemKey) };
}

/** The item's totals as the run record keeps them. */
export function itemView(run: ItemRun): GithubRunRecord['item'] {
  return { runs: run.item.runs, costUsd: run.item.costUsd, tokens: run.item.tokens, limits: run.limits };
}

/** The progress comment's budget line, once the item has limits. */
export function itemBudgetLine(run: ItemRun | undefined): string | undefined {
  return run && hasLimits(run.limits) ? budgetLine(run.limits, run.item) : undefined;
}

/** The session may spend what the item has left: its budgets are set so before each run's turn. */
export async function narrowSessionBudgets(deps: ItemDeps, repo: GithubRepoRecord, run: ItemRun, session: SessionRecord): Promise<void> {
  const budgets = sessionBudgetsFor(repo.settings?.budgets, run.limits, run.item, session);
  await deps.sessions.updateSettings(session.sessionId, { budgets });
}

/** Adds what the run spent to its item (an atomic add: concurrent runs on one item both count). */
export async function recordItemSpend(deps: ItemDeps, run: ItemRun, cost: Cost): Promise<void> {
  await deps.githubItems.addSpend(run.itemKey, { usd: cost.usd, tokens: cost.inputTokens + cost.outputTokens }, new Date(deps.clock()).toISOString());
  run.item = await deps.githubItems.get(run.itemKey);
}

const comment = (gh: Octokit, trigger: GithubTrigger, body: string) =>
  gh.rest.issues.createComment({ owner: trigger.owner, repo: trigger.name, issue_number: trigger.number, body });

/** A trigger on an item whose budget is spent: a comment naming the budget and how to raise it, no run. */
export async function budgetSpent(gh: Octokit, o: { trigger: GithubTrigger; mention: string; spent: string; save: Save }): Promise<GithubRunRecord> {
  await comment(
    gh,
    o.trigger,
    `💸 **Stratus** did not start: the budget of this ${o.trigger.isPullRequest ? 'pull request' : 'issue'} (every run on it counts) is spent: ${o.spent}. A writer can raise it with a comment \`${o.mention} budget +5usd\` (or \`+2 runs\`, \`+100000 tokens\`), or through the API; then mention me again.`,
  );
  return o.save({ outcome: 'budget_spent', detail: `The work item's budget is spent: ${o.spent}.` });
}

/**
 * Triggers answered without a run: a writer's `budget +…` command (the item's budgets raised,
 * and a comment saying so), and a PR whose failing-check attempts are used up (one comment).
 */
export async function answerWithoutRun(
  deps: ItemDeps,
  o: { trigger: GithubTrigger; repo: GithubRepoRecord; gh: Octokit; threadKey: string; save: Save },
): Promise<GithubRunRecord | undefined> {
  const { trigger } = o;
  if (trigger.budgetRaise) {
    const item = await deps.githubItems.raise(itemKeyOf(o.threadKey), trigger.budgetRaise, new Date(deps.clock()).toISOString());
    const limits = itemLimits(o.repo.settings?.budgets, item);
    await comment(o.gh, trigger, `💰 **Stratus**: budget raised by ${raiseText(trigger.budgetRaise)}. ${budgetLine(limits, item)}`);
    return o.save({
      outcome: 'budget_raised',
      detail: `Raised by ${raiseText(trigger.budgetRaise)}.`,
      item: { runs: item.runs, costUsd: item.costUsd, tokens: item.tokens, limits },
    });
  }
  if (trigger.checks?.limitReached) {
    const max = o.repo.settings?.failingChecks?.maxAttempts ?? DEFAULT_CHECK_FIX_ATTEMPTS;
    await comment(
      o.gh,
      trigger,
      `🛑 **Stratus** tried ${max} time${max === 1 ? '' : 's'} to fix the failing checks of this pull request and stops here; the checks of ${trigger.checks.headSha.slice(0, 12)} still fail. Mention me with what to do, or push a fix.`,
    );
    return o.save({ outcome: 'checks_limit_reached', detail: `The ${max} attempts at fixing the failing checks are used up.` });
  }
  return undefined;
}
