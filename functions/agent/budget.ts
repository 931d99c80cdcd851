import { roundUsd } from '../model/pricing.ts';
import { ConflictError } from '../shared/errors.ts';
import { BUDGET_NAMES, DEFAULT_MAX_MODEL_CALLS_PER_TURN, totalTokens, type BudgetName, type Budgets, type UsageRecord } from '../stores/budgets.ts';

export type { BudgetName, Budgets } from '../stores/budgets.ts';

/** What a session has spent, as the budgets count it. */
export interface BudgetSpend {
  /** Model calls of the running turn, across its continuations (0 before a turn). */
  modelCallsThisTurn: number;
  /** Turns the session has finished (the running one not counted). */
  turns: number;
  usage: UsageRecord;
  /** Seconds since the running turn started (0 before a turn). */
  wallSecondsThisTurn: number;
}

/** Why a budget stopped a turn (or refused one): which budget, its limit and what was spent. */
export interface BudgetExceeded {
  stopReason: 'budget_exceeded';
  budget: BudgetName;
  limit: number;
  spent: number;
}

/** Where a check happens: before a turn starts (session-wide budgets) or before a model call (all of them). */
export type BudgetCheckpoint = 'turn_start' | 'model_call';

/** The budgets in force: the session's own over the tenant's defaults, with the per-turn model-call cap always set. */
export function effectiveBudgets(...layers: (Budgets | undefined)[]): Budgets & { maxModelCallsPerTurn: number } {
  const merged: Budgets = {};
  for (const layer of layers) {
    for (const name of BUDGET_NAMES) if (layer?.[name] !== undefined) merged[name] = layer[name];
  }
  return { ...merged, maxModelCallsPerTurn: merged.maxModelCallsPerTurn ?? DEFAULT_MAX_MODEL_CALLS_PER_TURN };
}

/** What each budget has counted so far. */
export function spentOf(name: BudgetName, spend: BudgetSpend): number {
  switch (name) {
    case 'maxModelCallsPerTurn':
      return spend.modelCallsThisTurn;
    case 'maxTurns':
      return spend.turns;
    case 'maxTokens':
      return totalTokens(spend.usage);
    case 'maxCostUsd':
      return spend.usage.costUsd ?? 0;
    case 'maxWallSecondsPerTurn':
      return spend.wallSecondsThisTurn;
  }
}

/** Budgets that apply at each checkpoint: `maxTurns` only stops a turn from starting. */
const CHECKED_AT: Record<BudgetCheckpoint, readonly BudgetName[]> = {
  turn_start: ['maxTurns', 'maxTokens', 'maxCostUsd'],
  model_call: ['maxModelCallsPerTurn', 'maxTokens', 'maxCostUsd', 'maxWallSecondsPerTurn'],
};

/**
 * Fail-closed: a budget whose spend has reached its limit stops the work (another call would
 * only spend more). The first exhausted budget, in BUDGET_NAMES order, is the one named.
 */
export function checkBudgets(budgets: Budgets, spend: BudgetSpend, at: BudgetCheckpoint): BudgetExceeded | undefined {
  for (const name of CHECKED_AT[at]) {
    const limit = budgets[name];
    if (limit === undefined) continue;
    const spent = spentOf(name, spend);
    if (!(spent < limit)) return { stopReason: 'budget_exceeded', budget: name, limit, spent };
  }
  return undefined;
}

/** The sentence a client reads (turn_end `error`, the 409). */
export function budgetMessage(exceeded: BudgetExceeded): string {
  const show = (n: number) => (exceeded.budget === 'maxCostUsd' ? `${n.toFixed(4)} USD` : String(Math.round(n * 1000) / 1000));
  return `Budget ${exceeded.budget} exhausted: ${show(exceeded.spent)} spent of ${show(exceeded.limit)}.`;
}

/** A turn refused before it starts: a session-wide budget is already spent. */
export class BudgetExceededError extends ConflictError {
  constructor(readonly exceeded: BudgetExceeded) {
    super(`${budgetMessage(exceeded)} Raise it with PATCH /v1/sessions/:id to go on.`, 'budget_exceeded');
  }
}

/** Each budget as `GET /v1/sessions/:id` shows it: the limit (null: none), what is spent, what is left. */
export function budgetView(budgets: Budgets, spend: BudgetSpend): Record<BudgetName, { limit: number | null; spent: number; left: number | null }> {
  const view = {} as Record<BudgetName, { limit: number | null; spent: number; left: number | null }>;
  for (const name of BUDGET_NAMES) {
    const limit = budgets[name] ?? null;
    // Dollars to the micro-dollar: a limit minus a spend is otherwise float noise (0.47676499999999997).
    const tidy = name === 'maxCostUsd' ? roundUsd : (n: number) => n;
    const spent = tidy(spentOf(name, spend));
    view[name] = { limit, spent, left: limit === null ? null : tidy(Math.max(0, limit - spent)) };
  }
  return view;
}
