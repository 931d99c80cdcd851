import { z } from 'zod';
import { roundUsd } from '../model/pricing.ts';

/**
 * What a session may spend, as stored with the session (and as defaults per tenant and per
 * schedule). The check that enforces them is `functions/agent/budget.ts`; they are defined here
 * because the session and schedule records carry them.
 */
export const BUDGET_NAMES = ['maxModelCallsPerTurn', 'maxTurns', 'maxTokens', 'maxCostUsd', 'maxWallSecondsPerTurn'] as const;

export type BudgetName = (typeof BUDGET_NAMES)[number];

/**
 * The per-turn model-call cap when neither the config, the tenant nor the session sets one: a
 * real coding task often takes 100+ tool round trips (read, edit, run the tests, fix, run
 * again); the cap is there to stop a loop that makes no progress, not to cut real work short.
 */
export const DEFAULT_MAX_MODEL_CALLS_PER_TURN = 400;

const count = z.number().int().positive();

/** Every budget is optional: absent means no limit of that kind (the per-turn model-call cap always has a default). */
export const budgetsSchema = z.strictObject({
  /** Model calls (tool round trips) one turn may make, across its continuations. */
  maxModelCallsPerTurn: count.max(100_000).optional(),
  /** Turns the session may run. */
  maxTurns: count.max(1_000_000).optional(),
  /** Tokens the session may use: input, output, cache reads and cache writes together. */
  maxTokens: count.optional(),
  /** Dollars the session may spend on the model, priced from the model price table. */
  maxCostUsd: z.number().positive().max(1_000_000).optional(),
  /** Seconds one turn may run (wall clock, from its start, across continuations). */
  maxWallSecondsPerTurn: count.max(30 * 24 * 3600).optional(),
});

export type Budgets = z.infer<typeof budgetsSchema>;

/** A session's usage: tokens by kind and the dollars they cost, summed over every model call. */
export interface UsageRecord {
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens?: number;
  cacheCreationInputTokens?: number;
  costUsd?: number;
}

/** Adds `add` into `into`, the cost rounded to the micro-dollar as every stored sum is. */
export function addUsage(into: UsageRecord, add: UsageRecord): void {
  into.inputTokens += add.inputTokens;
  into.outputTokens += add.outputTokens;
  into.cacheReadInputTokens = (into.cacheReadInputTokens ?? 0) + (add.cacheReadInputTokens ?? 0);
  into.cacheCreationInputTokens = (into.cacheCreationInputTokens ?? 0) + (add.cacheCreationInputTokens ?? 0);
  into.costUsd = roundUsd((into.costUsd ?? 0) + (add.costUsd ?? 0));
}

/** All tokens of a usage record (what `maxTokens` counts). */
export function totalTokens(usage: UsageRecord): number {
  return usage.inputTokens + usage.outputTokens + (usage.cacheReadInputTokens ?? 0) + (usage.cacheCreationInputTokens ?? 0);
}
