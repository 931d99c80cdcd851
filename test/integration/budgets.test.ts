import { afterAll, describe, expect, it } from 'vitest';
import { startLocalStack, type LocalStack, type LocalStackOptions } from '../../local/stack.ts';
import { INTERRUPTED_MESSAGE } from '../../functions/tools/run-tool-use.ts';
import { apiClient } from '../support/api-client.ts';
import { makeTempDir } from '../support/temp-dir.ts';

/**
 * Budgets of each kind on the local stack, enforced fail-closed, shown in GET /v1/sessions/:id,
 * and still enforced after the whole stack restarts on the same data (and across continuations).
 */
describe('budgets', () => {
  const tmp = makeTempDir();
  let stack: LocalStack;
  let api: ReturnType<typeof apiClient>;
  const boot = async (opts: Omit<LocalStackOptions, 'dataDir'>) => {
    stack = await startLocalStack({ dataDir: tmp.dir, turn: { heartbeatMs: 200 }, ...opts });
    api = apiClient(stack.apiUrl, stack.token);
  };
  afterAll(async () => {
    await stack?.stop();
    tmp.cleanup();
  });

  const bashRound = (n: number, usage?: Record<string, number>) => ({
    content: [{ type: 'tool_use' as const, id: `toolu_r${n}_${Math.random().toString(36).slice(2, 8)}`, name: 'Bash', input: { command: `echo round ${n}` } }],
    ...(usage ? { usage } : {}),
  });
  const create = async (budgets: Record<string, number>) => {
    const res = await api.request('POST', '/v1/sessions', { budgets });
    expect(res.status).toBe(201);
    return res.json.id as string;
  };
  const view = async (id: string) => (await api.request('GET', `/v1/sessions/${id}`)).json;
  const ids: Record<string, string> = {};

  it('stops a turn at maxModelCallsPerTurn, giving every tool_use its result', async () => {
    await boot({ budgets: { defaults: { maxTurns: 100 }, tenants: { local: { maxCostUsd: 50 } } } });
    const id = (ids.calls = await create({ maxModelCallsPerTurn: 2 }));
    const before = stack.model!.requests.length;
    // Two rounds only: a third call would find no script and end the turn model_error, not
    // budget_exceeded; and no leftover response waits to answer a later test's turn.
    stack.model!.enqueue(bashRound(1), bashRound(2));
    const turn = await api.turn(id, 'go round');
    expect(turn.json).toMatchObject({ stopReason: 'budget_exceeded' });
    expect(turn.json.events.at(-1)).toMatchObject({ type: 'turn_end', stopReason: 'budget_exceeded', budget: 'maxModelCallsPerTurn' });
    expect(turn.json.error).toMatch(/maxModelCallsPerTurn exhausted: 2 spent of 2/);
    expect(stack.model!.requests.length - before).toBe(2);
    const kinds = (await api.messages(id)).map((m) => m.kind);
    expect(kinds).toEqual(['prompt', 'assistant', 'tool_result', 'assistant', 'tool_result']);
    const v = await view(id);
    expect(v.lastTurn).toMatchObject({ stopReason: 'budget_exceeded', budget: 'maxModelCallsPerTurn' });
    // The tenant's defaults apply where the session sets none.
    expect(v.budgets.maxTurns).toEqual({ limit: 100, spent: 1, left: 99 });
    expect(v.budgets.maxCostUsd.limit).toBe(50);
  });

  it('refuses a turn past maxTurns with 409 budget_exceeded', async () => {
    const id = (ids.turns = await create({ maxTurns: 1 }));
    stack.model!.enqueue({ content: [{ type: 'text', text: 'one' }] });
    expect((await api.turn(id, 'first')).json.stopReason).toBe('end_turn');
    const second = await api.turn(id, 'second');
    expect(second.status).toBe(409);
    expect(second.json.error).toMatchObject({ code: 'budget_exceeded' });
    expect(second.json.error.message).toMatch(/maxTurns exhausted: 1 spent of 1/);
    expect((await view(id)).budgets.maxTurns).toEqual({ limit: 1, spent: 1, left: 0 });
  });

  it('counts tokens of every kind against maxTokens and prices them for maxCostUsd', async () => {
    const usage = { input_tokens: 100_000, output_tokens: 1_000, cache_read_input_tokens: 200_000, cache_creation_input_tokens: 100_000 };
    const tokensId = (ids.tokens = await create({ maxTokens: 500_000 }));
    stack.model!.enqueue(bashRound(1, usage), bashRound(2, usage));
    const t = await api.turn(tokensId, 'spend tokens');
    // 401,000 tokens after one call (< 500,000), 802,000 after two: the third is not made.
    expect(t.json.events.at(-1)).toMatchObject({ stopReason: 'budget_exceeded', budget: 'maxTokens' });
    expect((await api.messages(tokensId)).filter((m) => m.kind === 'assistant')).toHaveLength(2);

    const costId = (ids.cost = await create({ maxCostUsd: 1 }));
    stack.model!.enqueue(bashRound(1, usage), bashRound(2, usage));
    const c = await api.turn(costId, 'spend dollars');
    expect(c.json.events.at(-1)).toMatchObject({ stopReason: 'budget_exceeded', budget: 'maxCostUsd' });
    // claude-sonnet list price: 3 USD/MTok in, 15 out, cache reads 0.3, cache writes 3.75 → 0.75 USD a call.
    const perCall = 0.1 * 3 + 0.001 * 15 + 0.2 * 0.3 + 0.1 * 3.75;
    const assistants = (await api.messages(costId)).filter((m) => m.kind === 'assistant');
    expect(assistants).toHaveLength(2);
    expect(assistants[0].usage).toMatchObject({ inputTokens: 100_000, cacheReadInputTokens: 200_000, cacheCreationInputTokens: 100_000 });
    expect(assistants[0].usage.costUsd).toBeCloseTo(perCall, 10);
    // Events carry the turn's running total; each stored message its own call's usage.
    const running = c.json.events.filter((e: { type: string }) => e.type === 'assistant_message').map((e: { usage: { costUsd: number } }) => e.usage.costUsd);
    expect(running[0]).toBeCloseTo(perCall, 10);
    expect(running[1]).toBeCloseTo(2 * perCall, 10);
    expect(c.json.usage.costUsd).toBeCloseTo(2 * perCall, 10);
    const v = await view(costId);
    expect(v.usage.costUsd).toBeCloseTo(2 * perCall, 10);
    expect(v.budgets.maxCostUsd.left).toBe(0);
    expect((await api.turn(costId, 'more')).status).toBe(409);
  });

  it('shows every cost to the micro-dollar: per call, running totals, the turn, the session and its budget', async () => {
    // claude-sonnet: 3001 input + 10 output tokens are 0.009153000000000001 in floating point; 3639 + 10 are 0.011067.
    const id = await create({ maxCostUsd: 1 });
    stack.model!.enqueue(bashRound(1, { input_tokens: 3001, output_tokens: 10 }), {
      content: [{ type: 'text', text: 'done' }],
      usage: { input_tokens: 3639, output_tokens: 10 },
    });
    const turn = await api.request('POST', `/v1/sessions/${id}/turns`, { prompt: 'spend a little' });
    expect(turn.json.stopReason).toBe('end_turn');
    expect(turn.json.usage.costUsd).toBe(0.02022);
    expect(
      turn.json.events.filter((e: { type: string }) => e.type === 'assistant_message').map((e: { usage: { costUsd: number } }) => e.usage.costUsd),
    ).toEqual([0.009153, 0.02022]);
    expect((await api.messages(id)).filter((m) => m.kind === 'assistant').map((m) => m.usage.costUsd)).toEqual([0.009153, 0.011067]);
    const v = await view(id);
    expect(v.usage.costUsd).toBe(0.02022);
    expect(v.budgets.maxCostUsd).toEqual({ limit: 1, spent: 0.02022, left: 0.97978 });
    // Nothing in any answer carries float noise.
    expect(turn.text).not.toMatch(/"costUsd":\d+\.\d{7,}/);
  });

  it('stops a turn at maxWallSecondsPerTurn, killing the command that runs', async () => {
    const id = (ids.wall = await create({ maxWallSecondsPerTurn: 2 }));
    stack.model!.enqueue({ content: [{ type: 'tool_use', id: 'toolu_sleep', name: 'Bash', input: { command: 'sleep 60' } }] });
    const t = await api.turn(id, 'take long');
    expect(t.json.events.at(-1)).toMatchObject({ stopReason: 'budget_exceeded', budget: 'maxWallSecondsPerTurn' });
    expect(t.json.events.find((e: { type: string }) => e.type === 'tool_result')).toMatchObject({ isError: true, content: INTERRUPTED_MESSAGE });
  });

  it('keeps every budget after a restart, and counts model calls across continuations', async () => {
    await stack.stop();
    // One model call per invocation: every round continues in a fresh one.
    await boot({ turn: { heartbeatMs: 200, invocationBudgetMs: 1, checkpointMarginMs: 0 } });
    expect((await api.turn(ids.turns!, 'after restart')).status).toBe(409);
    expect((await api.turn(ids.tokens!, 'after restart')).json.error.message).toMatch(/maxTokens/);
    expect((await api.turn(ids.cost!, 'after restart')).json.error.message).toMatch(/maxCostUsd/);

    const before = stack.model!.requests.length;
    stack.model!.enqueue(bashRound(1), bashRound(2));
    const calls = await api.turn(ids.calls!, 'again, across invocations');
    expect(calls.json.stopReason).toBe('budget_exceeded');
    const logged = await stack.deps.events.listAfter(ids.calls!, calls.json.turnId, -1);
    expect(logged.filter((e) => e.event.type === 'turn_continued')).toHaveLength(2);
    expect(calls.json.events.at(-1)).toMatchObject({ budget: 'maxModelCallsPerTurn' });
    expect(stack.model!.requests.length - before).toBe(2);

    stack.model!.enqueue({ content: [{ type: 'tool_use', id: 'toolu_sleep2', name: 'Bash', input: { command: 'sleep 60' } }] });
    const wall = await api.turn(ids.wall!, 'long again');
    expect(wall.json.events.at(-1)).toMatchObject({ stopReason: 'budget_exceeded', budget: 'maxWallSecondsPerTurn' });
  });
});
