import type { Deps } from '../deps/deps.ts';
import { roundUsd } from '../model/pricing.ts';
import { itemKeyOf } from '../stores/github-item-store.ts';
import type { GithubRepoRecord, GithubThreadRecord } from '../stores/github-store.ts';
import { itemLimits } from './item-budget.ts';

/**
 * A Stratus pull request merged or closed, kept with the tenant's runs (one record per PR, so a
 * redelivery or a reopen-and-close leaves one, the latest) with what its work item cost over
 * every run: what `GET /v1/github/stats` counts merges and cost per merged PR from.
 */
export async function recordClosedPullRequest(
  deps: Pick<Deps, 'github' | 'githubItems' | 'clock'>,
  o: { repo: GithubRepoRecord; thread: GithubThreadRecord; deliveryId: string; number: number; merged: boolean; sender: string },
): Promise<void> {
  const item = await deps.githubItems.get(itemKeyOf(o.thread.threadKey));
  const now = new Date(deps.clock()).toISOString();
  await deps.github.putRun({
    runId: `ghc_${o.repo.repositoryId ?? o.repo.fullName}_${o.number}`,
    tenantId: o.repo.tenantId,
    createdAt: now,
    updatedAt: now,
    deliveryId: o.deliveryId,
    repository: o.repo.fullName,
    number: o.number,
    kind: 'pull_request',
    trigger: 'closed',
    sender: o.sender,
    ...(o.thread.sessionId ? { sessionId: o.thread.sessionId } : {}),
    ...(o.thread.branch ? { branch: o.thread.branch } : {}),
    ...(o.thread.pullRequest ? { pullRequestUrl: o.thread.pullRequest.url } : {}),
    outcome: o.merged ? 'merged' : 'closed_unmerged',
    item: { runs: item.runs, costUsd: item.costUsd, tokens: item.tokens, limits: itemLimits(o.repo.settings?.budgets, item) },
  });
}

export interface RepositoryStats {
  repository: string;
  pullRequestsOpened: number;
  merged: number;
  closedUnmerged: number;
  runs: number;
  costUsd: number;
  /** What the merged PRs' work items cost in all (every run on each), per merged PR; null without a merge. */
  costPerMergedPrUsd: number | null;
}

const OPENED = new Set(['pr_opened', 'draft_pr_opened']);

/** Per repository, over runs and closings recorded in [from, to): PRs opened, merged, closed unmerged, runs and their cost. */
export async function githubStats(
  deps: Pick<Deps, 'github'>,
  tenantId: string,
  period: { from: string; to: string; repository?: string },
): Promise<RepositoryStats[]> {
  const byRepo = new Map<string, RepositoryStats & { mergedCost: number }>();
  const wanted = period.repository?.toLowerCase();
  for await (const r of deps.github.eachRun(tenantId)) {
    // Newest first: past the period's start, nothing older counts.
    if (r.createdAt < period.from) break;
    if (r.createdAt >= period.to || (wanted && r.repository.toLowerCase() !== wanted)) continue;
    const s = byRepo.get(r.repository) ?? {
      repository: r.repository,
      pullRequestsOpened: 0,
      merged: 0,
      closedUnmerged: 0,
      runs: 0,
      costUsd: 0,
      costPerMergedPrUsd: null,
      mergedCost: 0,
    };
    byRepo.set(r.repository, s);
    if (r.trigger === 'closed') {
      if (r.outcome === 'merged') {
        s.merged += 1;
        s.mergedCost += r.item?.costUsd ?? 0;
      } else s.closedUnmerged += 1;
      continue;
    }
    if (OPENED.has(r.outcome)) s.pullRequestsOpened += 1;
    // A run that worked (a turn ran) has a cost; refusals and answers without a turn do not.
    if (r.cost) s.runs += 1;
    s.costUsd += r.cost?.usd ?? 0;
  }
  return [...byRepo.values()]
    .map(({ mergedCost, ...s }) => ({ ...s, costUsd: roundUsd(s.costUsd), costPerMergedPrUsd: s.merged > 0 ? roundUsd(mergedCost / s.merged) : null }))
    .sort((a, b) => a.repository.localeCompare(b.repository));
}
