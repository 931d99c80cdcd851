import { describe, expect, it } from 'vitest';
import { loadSessionContext } from '../../functions/context/session-context.ts';
import { startLocalStack } from '../../local/stack.ts';
import { apiClient } from '../support/api-client.ts';
import { prefixProblem } from '../support/request-bodies.ts';
import { bash, chars, dateBlock, text, unscripted, useLocalStack } from '../support/stack-fixture.ts';
import { makeTempDir } from '../support/temp-dir.ts';
const SUMMARY_PREFIX =
  'This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.\n\n';

describe('compaction', () => {
  // Auto-compaction at 44,000 − min(16,384, 20,000) − 13,000 = 14,616 tokens (about 1,000 of
  // them are the system prompt and the instructions block: docs/context.md; about 5,300 the
  // built-in tools' schemas, 1,300 more since AskUserQuestion, Skill and WebFetch joined them,
  // 1,700 more since EnterPlanMode and ExitPlanMode did: 6,900 characters of schema).
  const env = useLocalStack({
    brain: unscripted,
    model: { contextWindow: 44_000, retryBaseDelayMs: 1 },
    context: { keepRecentMessages: 2, microCompactRatio: 1 },
  });

  it('triggers over the threshold, writes a boundary, and the next turn reloads only after it', async () => {
    const { stack, api } = env;
    const sessionId = await api.createSession();
    stack.model!.enqueue({ content: [bash('toolu_c1', chars(25_000, 'a'))] }, text('One.'));
    await api.turn(sessionId, 'first output');
    expect((await stack.deps.sessions.get(sessionId))!.reloadFromSeq).toBeUndefined();

    const before = stack.model!.requests.length;
    stack.model!.enqueue({ content: [bash('toolu_c2', chars(25_000, 'b'))] }, text('SUMMARY: two 25,000-char outputs were made.'), text('Two.'));
    expect((await api.turn(sessionId, 'second output')).json.stopReason).toBe('end_turn');
    const turn2 = stack.model!.requests.slice(before);
    expect(turn2).toHaveLength(3);
    // The summary call: the conversation before the kept tail, then the instructions.
    const summaryCall = turn2[1]!.body.messages;
    expect(summaryCall.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user']);
    expect(JSON.stringify(summaryCall.at(-1)!.content)).toContain('Your context is about to be compacted.');
    // The request after it: the summary, then the kept tail (the tool call and its result).
    const after = turn2[2]!.body.messages as any[];
    expect(after.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    // The session's instructions block opens the first message, the summary included.
    expect(after[0].content).toEqual([
      { type: 'text', text: dateBlock() },
      { type: 'text', text: `${SUMMARY_PREFIX}SUMMARY: two 25,000-char outputs were made.` },
    ]);
    expect(after[1].content[0]).toMatchObject({ type: 'tool_use', id: 'toolu_c2' });
    expect(after[2].content[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_c2', content: 'b'.repeat(25_000) });

    const session = (await stack.deps.sessions.get(sessionId))!;
    const log = await stack.deps.messages.loadFrom(sessionId, 0);
    const boundary = log.find((m) => m.kind === 'compact_boundary')!;
    const start = boundary.compact!.startSeq;
    expect(session.reloadFromSeq).toBe(start);
    expect(boundary.compact).toMatchObject({ trigger: 'auto', messagesSummarized: 5, previousStartSeq: null });
    // Summary, kept tail, then the boundary as the commit record, all of one compaction.
    expect(log.slice(start, boundary.seq + 1).map((m) => [m.kind, m.compactionId])).toEqual(
      ['compact_summary', 'assistant', 'tool_result', 'compact_boundary'].map((k) => [k, boundary.compactionId]),
    );

    // The next turn reads the log from the compaction on, and sends the same bytes as before.
    const loaded = await loadSessionContext(stack.deps, session);
    expect(loaded.itemsRead).toBe(session.messageCount - start);
    expect(loaded.conversation[0]!.kind).toBe('compact_summary');
    stack.model!.enqueue(text('Three.'));
    await api.turn(sessionId, 'third');
    const turn3 = stack.model!.requests.at(-1)!;
    expect(turn3.body.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user']);
    expect(JSON.stringify(turn3.body.messages)).not.toContain('first output');
    expect(prefixProblem(turn2[2]!.raw, turn3.raw)).toBeUndefined();

    // Compaction on demand: a second boundary after the first.
    stack.model!.enqueue(text('SUMMARY 2'));
    const res = await api.request('POST', `/v1/sessions/${sessionId}/compact`);
    expect(res.status).toBe(200);
    expect(res.json.reloadFromSeq).toBeGreaterThan(boundary.seq);
    const second = (await stack.deps.messages.loadFrom(sessionId, res.json.reloadFromSeq)).find((m) => m.kind === 'compact_boundary')!;
    expect(second.compact).toMatchObject({ trigger: 'manual', startSeq: res.json.reloadFromSeq, previousStartSeq: start });
  });

  it('refuses a manual compaction with nothing to summarise', async () => {
    const { api } = env;
    const sessionId = await api.createSession();
    const res = await api.request('POST', `/v1/sessions/${sessionId}/compact`);
    expect(res.status).toBe(400);
    expect(res.json.error).toEqual({ code: 'not_enough_messages', message: 'Not enough messages to compact.' });
  });

  it('answers a manual compaction whose summary call the model refuses with 502 model_error, and writes no boundary', async () => {
    const { stack, api } = env;
    const sessionId = await api.createSession();
    stack.model!.enqueue(text('One.'));
    await api.turn(sessionId, 'first');
    stack.model!.enqueue(text('Two.'));
    await api.turn(sessionId, 'second');
    stack.model!.enqueue({ error: { status: 400, type: 'invalid_request_error', message: 'no summary today' } });
    const res = await api.request('POST', `/v1/sessions/${sessionId}/compact`);
    expect(res.status).toBe(502);
    expect(res.json.error.code).toBe('model_error');
    expect(res.json.error.message).toMatch(/^The model API failed: 400 .*no summary today/);
    expect((await stack.deps.messages.loadFrom(sessionId, 0)).some((m) => m.kind === 'compact_boundary')).toBe(false);
    expect(stack.model!.remaining()).toBe(0);
  });

  it('stops trying after three failed auto-compactions in a row', async () => {
    const { stack, api } = env;
    const sessionId = await api.createSession();
    const bad = { error: { status: 400, type: 'invalid_request_error', message: 'no summary today' } };
    const before = stack.model!.requests.length;
    stack.model!.enqueue(
      { content: [bash('toolu_f1', chars(25_000, 'a')), bash('toolu_f2', chars(25_000, 'b'))] },
      bad,
      { content: [bash('toolu_f3', 'echo hi')] },
      bad,
      { content: [bash('toolu_f4', 'echo hi')] },
      bad,
      text('Done.'),
    );
    expect((await api.turn(sessionId, 'fill it')).json.stopReason).toBe('end_turn');
    expect(stack.model!.requests.length - before).toBe(7);
    expect((await stack.deps.sessions.get(sessionId))!.autoCompactFailures).toBe(3);

    stack.model!.enqueue(text('No more tries.'));
    await api.turn(sessionId, 'again');
    expect(stack.model!.requests.length - before).toBe(8);
    expect(stack.model!.remaining()).toBe(0);
  });
});

describe('micro-compaction', () => {
  // Micro-compaction past 30% of 10,616 tokens, keeping the newest result; no full compaction.
  const env = useLocalStack({
    brain: unscripted,
    model: { contextWindow: 40_000 },
    context: { autoCompact: false, microCompactRatio: 0.3, microCompactKeepRecent: 1 },
  });

  it('clears old tool results with the marker and keeps clearing them the same way next turn', async () => {
    const { stack, api } = env;
    const sessionId = await api.createSession();
    stack.model!.enqueue(
      { content: [bash('toolu_m1', chars(6000, 'a'))] },
      { content: [bash('toolu_m2', chars(6000, 'b'))] },
      { content: [bash('toolu_m3', chars(6000, 'c'))] },
      text('Done.'),
    );
    await api.turn(sessionId, 'three outputs');
    const last = stack.model!.requests.at(-1)!;
    const results = (last.body.messages as any[])
      .flatMap((m) => (m.role === 'user' && Array.isArray(m.content) ? m.content : []))
      .filter((b) => b.type === 'tool_result');
    expect(results.map((b) => [b.tool_use_id, b.content.length > 100 ? `${b.content[0]}×${b.content.length}` : b.content])).toEqual([
      ['toolu_m1', '[Old tool result content cleared]'],
      ['toolu_m2', '[Old tool result content cleared]'],
      ['toolu_m3', 'c×6000'],
    ]);
    stack.model!.enqueue(text('Again.'));
    await api.turn(sessionId, 'next');
    expect(prefixProblem(last.raw, stack.model!.requests.at(-1)!.raw)).toBeUndefined();
  });
});

describe('compaction and the replacement budget', () => {
  it('keeps the kept tail frozen across a restart, even under a lower budget', async () => {
    const tmp = makeTempDir();
    const start = (budget: number, autoCompact: boolean) =>
      startLocalStack({
        dataDir: tmp.dir,
        brain: unscripted,
        // The window leaves room for the system prompt and the fourteen built-in tools' schemas (the
        // Agent tool's description, with its list of agents, is about 1,700 tokens of them;
        // EnterPlanMode and ExitPlanMode another 1,700).
        model: { contextWindow: 46_900 },
        context: { keepRecentMessages: 4, microCompactRatio: 1, perMessageBudgetChars: budget, autoCompact },
      });
    let stack = await start(60_000, true);
    try {
      let api = apiClient(stack.apiUrl, stack.token);
      const sessionId = await api.createSession();
      stack.model!.enqueue(text('Hello.'), text('Hello again.'));
      await api.turn(sessionId, 'hello');
      await api.turn(sessionId, 'hello again');
      // 36,000 chars of results stay under the 10,616-token threshold and pass the budget (seen,
      // kept whole); the next result crosses the threshold, and compaction keeps them in its tail.
      stack.model!.enqueue(
        { content: [bash('toolu_k1', chars(18_000, 'a')), bash('toolu_k2', chars(18_000, 'b'))] },
        { content: [bash('toolu_k3', chars(8_000, 'c'))] },
        text('SUMMARY: three outputs.'),
        text('Three outputs.'),
      );
      await api.turn(sessionId, 'three outputs');
      const log = await stack.deps.messages.loadFrom(sessionId, 0);
      expect(log.find((m) => m.kind === 'compact_boundary')).toBeDefined();
      const before = stack.model!.requests.at(-1)!.raw;
      expect(before).toContain('SUMMARY: three outputs.');
      expect(before).toContain('a'.repeat(18_000));
      expect(before).toContain('b'.repeat(18_000));

      // Restarted with a 30,000 budget (and no auto-compaction): re-deciding the kept results
      // would replace toolu_k1 and change bytes the model has already cached.
      await stack.stop();
      stack = await start(30_000, false);
      api = apiClient(stack.apiUrl, stack.token);
      stack.model!.enqueue(text('After restart.'));
      await api.turn(sessionId, 'and again');
      expect(prefixProblem(before, stack.model!.requests.at(-1)!.raw)).toBeUndefined();
    } finally {
      await stack.stop();
      tmp.cleanup();
    }
  });
});
