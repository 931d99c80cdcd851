import { describe, expect, it } from 'vitest';
import { budgetView, checkBudgets, effectiveBudgets } from '../../../functions/agent/budget.ts';
import { DEFAULT_MAX_MODEL_CALLS_PER_TURN } from '../../../functions/stores/budgets.ts';
import { configFromEnv } from '../../../functions/deps/config.ts';
import { costUsd, DEFAULT_PRICES, priceOf } from '../../../functions/model/pricing.ts';
import { tableEnvironment, tableNames } from '../../../functions/stores/tables.ts';

const spend = (over: Partial<Parameters<typeof checkBudgets>[1]> = {}) => ({
  modelCallsThisTurn: 0,
  turns: 0,
  usage: { inputTokens: 0, outputTokens: 0 },
  wallSecondsThisTurn: 0,
  ...over,
});

describe('budgets', () => {
  it('layers session over tenant over everyone, and always sets a per-turn model-call cap that fits real work', () => {
    expect(effectiveBudgets(undefined)).toEqual({ maxModelCallsPerTurn: DEFAULT_MAX_MODEL_CALLS_PER_TURN });
    expect(DEFAULT_MAX_MODEL_CALLS_PER_TURN).toBeGreaterThanOrEqual(100);
    expect(effectiveBudgets({ maxModelCallsPerTurn: 50, maxTurns: 10 }, { maxTurns: 5, maxCostUsd: 2 }, { maxCostUsd: 1 })).toEqual({
      maxModelCallsPerTurn: 50,
      maxTurns: 5,
      maxCostUsd: 1,
    });
  });

  it('names the first exhausted budget, checking only what applies where', () => {
    const budgets = { maxTurns: 2, maxTokens: 100, maxModelCallsPerTurn: 3, maxWallSecondsPerTurn: 10 };
    expect(checkBudgets(budgets, spend({ turns: 1, modelCallsThisTurn: 2 }), 'model_call')).toBeUndefined();
    // maxTurns stops a turn from starting, never a running one.
    expect(checkBudgets(budgets, spend({ turns: 2 }), 'model_call')).toBeUndefined();
    expect(checkBudgets(budgets, spend({ turns: 2 }), 'turn_start')).toEqual({ stopReason: 'budget_exceeded', budget: 'maxTurns', limit: 2, spent: 2 });
    expect(checkBudgets(budgets, spend({ modelCallsThisTurn: 3 }), 'model_call')?.budget).toBe('maxModelCallsPerTurn');
    expect(checkBudgets(budgets, spend({ usage: { inputTokens: 60, outputTokens: 20, cacheReadInputTokens: 20 } }), 'model_call')?.budget).toBe('maxTokens');
    expect(checkBudgets(budgets, spend({ wallSecondsThisTurn: 10.5 }), 'model_call')?.budget).toBe('maxWallSecondsPerTurn');
    expect(budgetView({ maxTurns: 2 }, spend({ turns: 3 })).maxTurns).toEqual({ limit: 2, spent: 3, left: 0 });
  });

  it('prices by the longest matching prefix, and prices an unknown model as the dearest (fail-closed)', () => {
    expect(priceOf(DEFAULT_PRICES, 'claude-opus-4-5-20251101')).toEqual({ inputPerMTok: 5, outputPerMTok: 25 });
    expect(priceOf(DEFAULT_PRICES, 'claude-opus-4-20250514').inputPerMTok).toBe(15);
    expect(priceOf(DEFAULT_PRICES, 'some-other-model').outputPerMTok).toBe(75);
    expect(
      costUsd(DEFAULT_PRICES, 'claude-haiku-4-5', {
        inputTokens: 1_000_000,
        outputTokens: 0,
        cacheReadInputTokens: 1_000_000,
        cacheCreationInputTokens: 1_000_000,
      }),
    ).toBeCloseTo(1 + 0.1 + 1.25, 10);
  });

  it('reads budgets and prices from the environment, and names a variable whose JSON does not parse', () => {
    const env = { ...tableEnvironment(tableNames('t')), STRATUS_BUCKET: 'b', STRATUS_RUNNER_FUNCTION: 'r', STRATUS_SELF_FUNCTION: 's', ANTHROPIC_API_KEY: 'k' };
    const config = configFromEnv({
      ...env,
      STRATUS_BUDGETS: '{"maxCostUsd":5}',
      STRATUS_TENANT_BUDGETS: '{"acme":{"maxTurns":3}}',
      STRATUS_MODEL_PRICES: '{"my-model":{"inputPerMTok":1,"outputPerMTok":2}}',
    });
    expect(config.budgets).toEqual({ defaults: { maxCostUsd: 5 }, tenants: { acme: { maxTurns: 3 } } });
    expect(config.modelPrices['my-model']).toEqual({ inputPerMTok: 1, outputPerMTok: 2 });
    expect(config.modelPrices['claude-sonnet']).toEqual(DEFAULT_PRICES['claude-sonnet']);
    expect(() => configFromEnv({ ...env, STRATUS_BUDGETS: '{maxCostUsd:5}' })).toThrow(/STRATUS_BUDGETS: not valid JSON/);
    expect(() => configFromEnv({ ...env, STRATUS_BUDGETS: '{"maxCostUsd":-1}' })).toThrow();
  });
});
