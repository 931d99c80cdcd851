import { describe, expect, it } from 'vitest';
import { bash, text, unscripted, useLocalStack } from '../support/stack-fixture.ts';
import { until } from '../support/until.ts';

/** STRATUS_TENANT_RUNNER_CALLS through the whole stack: past the cap an API request gets 429, a turn's tool call waits its turn. */
describe("a tenant's cap on concurrent sandbox runner calls", () => {
  const fx = useLocalStack({ brain: unscripted, settings: { model: {}, turn: {}, api: {}, observability: {}, tenantRunnerCalls: 1 } });

  it('answers 429 with Retry-After to a request that needs the runner, and runs a waiting tool call once the slot is free', { timeout: 120_000 }, async () => {
    const slowSession = await fx.api.createSession();
    const waitingSession = await fx.api.createSession();
    fx.stack.model!.enqueue(
      { forFirstText: 'slow', content: [bash('toolu_slow', 'sleep 4; echo slow done')] },
      { forFirstText: 'slow', ...text('Slow one done.') },
      { forFirstText: 'quick', content: [bash('toolu_quick', 'echo quick done')] },
      { forFirstText: 'quick', ...text('Quick one done.') },
    );
    const slow = fx.api.turn(slowSession, 'slow: run it');
    // The slow command holds the tenant's one slot (the model asked for it, a slot is taken).
    await until(
      async () => ({ asked: fx.stack.model!.requests.length, held: Object.keys((await fx.stack.deps.runnerSlots.held('local')) ?? {}).length }),
      (s) => s.asked >= 1 && s.held === 1,
    );

    const refused = await fetch(`${fx.stack.apiUrl}/v1/sessions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${fx.stack.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ files: { 'a.txt': 'a\n' } }),
    });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('5');
    const body = (await refused.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('runner_calls_limit');
    expect(body.error.message).toContain('(STRATUS_TENANT_RUNNER_CALLS); retry in a few seconds');

    // A second session's tool call waits for the slot instead of failing, and runs once it is free.
    const quick = await fx.api.turn(waitingSession, 'quick: run it');
    expect((await slow).json).toMatchObject({ stopReason: 'end_turn' });
    expect(quick.json).toMatchObject({ stopReason: 'end_turn' });
    const result = quick.json.events.find((e: { type: string; toolUseId?: string }) => e.type === 'tool_result' && e.toolUseId === 'toolu_quick');
    expect(result).toMatchObject({ isError: false });
    expect(JSON.stringify(result.content)).toContain('quick done');
    expect(await fx.stack.deps.runnerSlots.held('local')).toEqual({});
    // With the slot free, the same request goes through.
    expect(await fx.api.createSession({ 'a.txt': 'a\n' })).toMatch(/^ses_/);
  });
});
