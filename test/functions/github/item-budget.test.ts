import { describe, expect, it } from 'vitest';
import { budgetCommand, itemLimits, sessionBudgetsFor, spentLimit } from '../../../functions/github/item-budget.ts';
import { repliesIn } from '../../../functions/github/review-comments.ts';
import type { SessionRecord } from '../../../functions/stores/session-store.ts';

const item = (over: Partial<Parameters<typeof itemLimits>[1]> = {}) => ({ itemKey: 'item:x', runs: 0, costUsd: 0, tokens: 0, ...over });

describe('one budget per work item', () => {
  it('reads `budget +…` commands: dollars, tokens and runs, several at once; anything else is no command', () => {
    expect(budgetCommand('@stratus budget +5usd', '@stratus')).toEqual({ usd: 5 });
    expect(budgetCommand('@stratus budget +$2.5', '@stratus')).toEqual({ usd: 2.5 });
    expect(budgetCommand('please @Stratus budget +2 runs +100000 tokens', '@stratus')).toEqual({ runs: 2, tokens: 100_000 });
    expect(budgetCommand('@stratus budget 5usd', '@stratus')).toBeUndefined();
    expect(budgetCommand('@stratus fix the budget +5usd check', '@stratus')).toBeUndefined();
    expect(budgetCommand('@other budget +5usd', '@stratus')).toBeUndefined();
    expect(budgetCommand('@stratus budget +0usd', '@stratus')).toBeUndefined();
  });

  it("adds raises to the repository's limits and names the first one spent", () => {
    const limits = itemLimits({ maxTurns: 2, maxCostUsd: 1, maxModelCallsPerTurn: 10 }, item({ raisedRuns: 1 }));
    expect(limits).toEqual({ maxRuns: 3, maxCostUsd: 1 });
    expect(spentLimit(limits, item({ runs: 2, costUsd: 0.5 }))).toBeUndefined();
    expect(spentLimit(limits, item({ runs: 3 }))).toBe('maxTurns (3 of 3 runs)');
    expect(spentLimit(limits, item({ runs: 1, costUsd: 1.2 }))).toBe('maxCostUsd ($1.2000 of $1.00)');
    expect(itemLimits(undefined, item())).toEqual({});
  });

  it("gives the run's session only what the item has left, and keeps the per-turn budgets", () => {
    const session = { usage: { inputTokens: 1_000, outputTokens: 500, costUsd: 0.25 } } as SessionRecord;
    const budgets = { maxTurns: 5, maxTokens: 10_000, maxCostUsd: 2, maxModelCallsPerTurn: 40 };
    const out = sessionBudgetsFor(budgets, itemLimits(budgets, item()), item({ tokens: 4_000, costUsd: 1.5 }), session);
    expect(out).toEqual({ maxModelCallsPerTurn: 40, maxTokens: 1_500 + 6_000, maxCostUsd: 0.75 });
  });

  it("reads the model's `[comment <id>]` reply lines", () => {
    const replies = repliesIn('Done.\n[comment 12] Renamed it.\n- [comment 13] Left as is: it is tested.\nnot [comment 14] this');
    expect([...replies]).toEqual([
      [12, 'Renamed it.'],
      [13, 'Left as is: it is tested.'],
    ]);
  });
});
