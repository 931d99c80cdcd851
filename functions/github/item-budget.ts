/**
 * One budget per work item: a repository's `maxCostUsd`, `maxTokens` and `maxTurns` (runs) count
 * per issue or pull request, over every run and retrigger on it, not per session. A run starts
 * only while the item's budgets are unspent (one conditional update: functions/stores/github-item-store.ts);
 * the run's session may spend only what is left, so a run that reaches the limit stops with its
 * work kept (a draft PR); after that, triggers on the item get a comment until a writer raises it
 * (`@stratus budget +5usd` in a comment, or `POST /v1/github/repositories/{owner}/{name}/items/{number}/budget`).
 */
import { roundUsd } from '../model/pricing.ts';
import { totalTokens, type Budgets } from '../stores/budgets.ts';
import type { GithubItemRecord, ItemLimits, ItemRaise } from '../stores/github-item-store.ts';
import type { SessionRecord } from '../stores/session-store.ts';

/** The item's limits: the repository's budgets plus what writers raised. */
export function itemLimits(budgets: Budgets | undefined, item: GithubItemRecord): ItemLimits {
  const plus = (limit: number | undefined, raised: number | undefined) => (limit === undefined ? undefined : limit + (raised ?? 0));
  const limits: ItemLimits = {
    maxRuns: plus(budgets?.maxTurns, item.raisedRuns),
    maxCostUsd: plus(budgets?.maxCostUsd, item.raisedCostUsd),
    maxTokens: plus(budgets?.maxTokens, item.raisedTokens),
  };
  return Object.fromEntries(Object.entries(limits).filter(([, v]) => v !== undefined)) as ItemLimits;
}

export function hasLimits(limits: ItemLimits): boolean {
  return Object.keys(limits).length > 0;
}

/** The first limit the item has spent, in words a maintainer can act on. */
export function spentLimit(limits: ItemLimits, item: GithubItemRecord): string | undefined {
  if (limits.maxRuns !== undefined && item.runs >= limits.maxRuns) return `maxTurns (${item.runs} of ${limits.maxRuns} runs)`;
  if (limits.maxCostUsd !== undefined && item.costUsd >= limits.maxCostUsd)
    return `maxCostUsd ($${item.costUsd.toFixed(4)} of $${limits.maxCostUsd.toFixed(2)})`;
  if (limits.maxTokens !== undefined && item.tokens >= limits.maxTokens) return `maxTokens (${item.tokens} of ${limits.maxTokens} tokens)`;
  return undefined;
}

/** One line for the progress comment: what the item has spent of each of its limits. */
export function budgetLine(limits: ItemLimits, item: GithubItemRecord): string {
  const parts = [
    `${item.runs}${limits.maxRuns !== undefined ? ` of ${limits.maxRuns}` : ''} runs`,
    `$${item.costUsd.toFixed(4)}${limits.maxCostUsd !== undefined ? ` of $${limits.maxCostUsd.toFixed(2)}` : ''}`,
    `${item.tokens}${limits.maxTokens !== undefined ? ` of ${limits.maxTokens}` : ''} tokens`,
  ];
  return `Budget for this item (every run on it): ${parts.join(' · ')}.`;
}

/**
 * The run's session budgets: the repository's per-turn ones as they are, and the session's
 * cost and tokens capped at what it has spent plus what the item has left, so the turn stops
 * (a draft PR keeps the work) when the item's budget is spent. Runs are counted per item
 * before the run starts, so the session itself gets no turn limit.
 */
export function sessionBudgetsFor(budgets: Budgets | undefined, limits: ItemLimits, item: GithubItemRecord, session: SessionRecord): Budgets {
  const { maxTurns: _runs, maxCostUsd: _usd, maxTokens: _tokens, ...perTurn } = budgets ?? {};
  const out: Budgets = { ...perTurn };
  if (limits.maxCostUsd !== undefined) out.maxCostUsd = roundUsd((session.usage.costUsd ?? 0) + Math.max(limits.maxCostUsd - item.costUsd, 0.000001));
  if (limits.maxTokens !== undefined) out.maxTokens = totalTokens(session.usage) + Math.max(limits.maxTokens - item.tokens, 1);
  return out;
}

/**
 * `@stratus budget +5usd`, `+$5`, `+20000 tokens`, `+2 runs` (several at once too): the raise a
 * writer's comment asks for, or nothing when the comment is not a budget command.
 */
export function budgetCommand(body: string, mention: string): ItemRaise | undefined {
  const escaped = mention.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const command = new RegExp(`${escaped}\\s+budget((?:\\s+\\+\\s*\\$?\\d+(?:\\.\\d+)?\\s*(?:usd|\\$|dollars?|tokens?|runs?)?)+)`, 'i').exec(body);
  if (!command) return undefined;
  const raise: ItemRaise = {};
  for (const m of command[1]!.matchAll(/\+\s*(\$?)(\d+(?:\.\d+)?)\s*(usd|\$|dollars?|tokens?|runs?)?/gi)) {
    const amount = Number(m[2]);
    const unit = (m[3] ?? (m[1] ? 'usd' : 'usd')).toLowerCase();
    if (unit.startsWith('token')) raise.tokens = (raise.tokens ?? 0) + Math.round(amount);
    else if (unit.startsWith('run')) raise.runs = (raise.runs ?? 0) + Math.round(amount);
    else raise.usd = roundUsd((raise.usd ?? 0) + amount);
  }
  return Object.values(raise).some((v) => v > 0) ? raise : undefined;
}

export function raiseText(by: ItemRaise): string {
  return [by.usd ? `$${by.usd}` : '', by.tokens ? `${by.tokens} tokens` : '', by.runs ? `${by.runs} runs` : ''].filter(Boolean).join(', ');
}
