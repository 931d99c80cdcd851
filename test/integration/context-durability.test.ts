import { describe, expect, it } from 'vitest';
import { text, unscripted, useLocalStack } from '../support/stack-fixture.ts';

describe('durable transcripts and the model call', () => {
  const env = useLocalStack({ brain: unscripted, model: { retryBaseDelayMs: 1, fallbackName: 'claude-fallback' } });

  it('lets Read open a persisted result by the path the model was given', async () => {
    const { stack, api } = env;
    const sessionId = await api.createSession();
    stack.model!.enqueue(
      { content: [{ type: 'tool_use', id: 'toolu_seq', name: 'Bash', input: { command: 'seq 1 40000' } }] },
      {
        content: [
          { type: 'tool_use', id: 'toolu_r1', name: 'Read', input: { file_path: '/workspace/.stratus/tool-results/toolu_seq.txt', offset: 2, limit: 3 } },
          { type: 'tool_use', id: 'toolu_r2', name: 'Read', input: { file_path: '/workspace/.stratus/tool-results/toolu_nope.txt' } },
        ],
      },
      text('Read it.'),
    );
    const res = await api.turn(sessionId, 'big output then read it');
    const results = res.json.events.filter((e: any) => e.type === 'tool_result');
    expect(results[0].content).toMatch(
      /^<persisted-output>\nOutput too large \(223\.5KB\)\. Full output saved to: \/workspace\/\.stratus\/tool-results\/toolu_seq\.txt\n/,
    );
    expect(results[1]).toMatchObject({ toolUseId: 'toolu_r1', isError: false, content: '2\t2\n3\t3\n4\t4' });
    expect(results[2]).toMatchObject({ toolUseId: 'toolu_r2', isError: true });
    expect(results[2].content).toContain('File does not exist.');

    // A person opens the whole result through the API; another session, or an id never persisted, is a 404.
    const full = await api.request('GET', `/v1/sessions/${sessionId}/tool-results/toolu_seq`);
    expect(full.status).toBe(200);
    expect(full.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(full.text).toBe(Array.from({ length: 40_000 }, (_, i) => i + 1).join('\n'));
    const otherSession = await api.createSession();
    for (const path of [
      `/v1/sessions/${otherSession}/tool-results/toolu_seq`,
      `/v1/sessions/${sessionId}/tool-results/toolu_r1`,
      `/v1/sessions/${sessionId}/tool-results/..%2Ftoolu_seq`,
    ]) {
      const res = await api.request('GET', path);
      expect([path, res.status, res.json.error.code]).toEqual([path, 404, 'not_found']);
    }
  });

  it('retries a 529 and succeeds on the next attempt', async () => {
    const { stack, api } = env;
    const sessionId = await api.createSession();
    const before = stack.model!.requests.length;
    stack.model!.enqueue({ error: { status: 529, type: 'overloaded_error', message: 'Overloaded' } }, text('Made it.'));
    const res = await api.turn(sessionId, 'hello');
    expect(res.json).toMatchObject({ stopReason: 'end_turn', error: null });
    expect(stack.model!.requests.length - before).toBe(2);
    const messages = await api.messages(sessionId);
    expect(messages.map((m) => [m.kind, m.content])).toEqual([
      ['prompt', [{ type: 'text', text: 'hello' }]],
      ['assistant', [{ type: 'text', text: 'Made it.' }]],
    ]);
  });

  it('moves to the fallback model after three overloaded answers in a row', async () => {
    const { stack, api } = env;
    const sessionId = await api.createSession();
    const before = stack.model!.requests.length;
    const overloaded = { error: { status: 529, type: 'overloaded_error', message: 'Overloaded' } };
    stack.model!.enqueue(overloaded, overloaded, overloaded, text('From the fallback.'));
    const res = await api.turn(sessionId, 'hello');
    expect(res.json.stopReason).toBe('end_turn');
    expect(stack.model!.requests.slice(before).map((r) => r.body.model)).toEqual([
      'claude-sonnet-5-5',
      'claude-sonnet-5-5',
      'claude-sonnet-5-5',
      'claude-fallback',
    ]);
  });

  it('stays on the fallback model for the rest of the turn, says so, and records the model that answered', async () => {
    const { stack, api } = env;
    const sessionId = await api.createSession();
    const before = stack.model!.requests.length;
    const overloaded = { error: { status: 529, type: 'overloaded_error', message: 'Overloaded' } };
    stack.model!.enqueue(
      overloaded,
      overloaded,
      overloaded,
      { content: [{ type: 'tool_use', id: 'toolu_fb', name: 'Bash', input: { command: 'echo hi' } }] },
      text('Done on the fallback.'),
    );
    const res = await api.turn(sessionId, 'hello');
    expect(res.json.stopReason).toBe('end_turn');
    expect(stack.model!.requests.slice(before).map((r) => r.body.model)).toEqual([
      'claude-sonnet-5-5',
      'claude-sonnet-5-5',
      'claude-sonnet-5-5',
      'claude-fallback',
      'claude-fallback',
    ]);
    expect(res.json.events.filter((e: any) => e.type === 'model_fallback')).toEqual([
      { type: 'model_fallback', from: 'claude-sonnet-5-5', to: 'claude-fallback' },
    ]);
    const stored = await stack.deps.messages.loadFrom(sessionId, 0);
    expect(stored.filter((m) => m.kind === 'assistant').map((m) => m.model)).toEqual(['claude-fallback', 'claude-fallback']);
  });

  it('records a partial response after a fallback under the fallback model', async () => {
    const { stack, api } = env;
    const sessionId = await api.createSession();
    const overloaded = { error: { status: 529, type: 'overloaded_error', message: 'Overloaded' } };
    // The tool_use block closes (event 3) and its call starts, then the connection drops: the
    // partial response is recorded as the assistant message so the call gets its result.
    const cut = { content: [{ type: 'tool_use' as const, id: 'toolu_cut', name: 'Bash', input: { command: 'echo cut' } }], breakAfterEvents: 4, delayMs: 10 };
    stack.model!.enqueue(overloaded, overloaded, overloaded, cut);
    const res = await api.turn(sessionId, 'hello');
    expect(res.json.stopReason).toBe('model_error');
    const stored = await stack.deps.messages.loadFrom(sessionId, 0);
    const assistant = stored.filter((m) => m.kind === 'assistant');
    expect(assistant.map((m) => [m.model, m.content.map((b) => b.type)])).toEqual([['claude-fallback', ['tool_use']]]);
    expect(stored.find((m) => m.kind === 'tool_result')?.content).toMatchObject([{ type: 'tool_result', tool_use_id: 'toolu_cut' }]);
  });

  it('does not retry a 400: the error ends the turn once', async () => {
    const { stack, api } = env;
    const sessionId = await api.createSession();
    const before = stack.model!.requests.length;
    stack.model!.enqueue({ error: { status: 400, type: 'invalid_request_error', message: 'bad request' } });
    const res = await api.turn(sessionId, 'hello');
    expect(res.json.stopReason).toBe('model_error');
    expect(stack.model!.requests.length - before).toBe(1);
  });

  it('tombstones a message cut off by a broken stream and never sends it again', async () => {
    const { stack, api } = env;
    const sessionId = await api.createSession();
    const before = stack.model!.requests.length;
    // message_start, block start, two text deltas … then the connection drops (the pause lets them flush).
    stack.model!.enqueue(
      { content: [{ type: 'text', text: 'This answer is going to be cut off half way through.' }], breakAfterEvents: 4, delayMs: 10 },
      text('Second try, complete.'),
    );
    const res = await api.turn(sessionId, 'say something');
    expect(res.json).toMatchObject({ stopReason: 'end_turn', error: null });
    expect(res.json.events.map((e: any) => e.type)).toEqual(['turn_start', 'tombstone', 'model_retry', 'assistant_message', 'turn_end']);
    const messages = await api.messages(sessionId);
    expect(messages.map((m) => [m.kind, m.role])).toEqual([
      ['prompt', 'user'],
      ['tombstone', 'assistant'],
      ['assistant', 'assistant'],
    ]);
    expect(messages[1].content).toEqual([{ type: 'text', text: 'This answer is going to be cut off half way thro', citations: null }]);

    stack.model!.enqueue(text('Next turn.'));
    await api.turn(sessionId, 'again');
    const sent = stack.model!.requests.slice(before).map((r) => r.body.messages);
    expect(sent).toHaveLength(3);
    expect(sent[2]!.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(JSON.stringify(sent[2])).not.toContain('cut off');
  });
});

describe('responses cut off by max_tokens, and prompts too long', () => {
  const env = useLocalStack({ brain: unscripted, model: { retryBaseDelayMs: 1 } });

  it('asks the model to resume instead of ending the turn on max_tokens', async () => {
    const { stack, api } = env;
    const sessionId = await api.createSession();
    stack.model!.enqueue({ content: [{ type: 'text', text: 'The first half of a long' }], stopReason: 'max_tokens' }, text(' answer, finished.'));
    const res = await api.turn(sessionId, 'write a lot');
    expect(res.json).toMatchObject({ stopReason: 'end_turn', error: null });
    const resumed = stack.model!.requests.at(-1)!.body.messages;
    expect(resumed.at(-1)!.content).toEqual([
      {
        type: 'text',
        text: 'Output token limit hit. Resume directly — no apology, no recap of what you were doing. Pick up mid-thought if that is where the cut happened. Break remaining work into smaller pieces.',
        cache_control: { type: 'ephemeral' },
      },
    ]);
    expect((await api.messages(sessionId)).map((m) => m.kind)).toEqual(['prompt', 'assistant', 'synthetic', 'assistant']);
  });

  it('does not run a tool call cut off by max_tokens, and tells the model why', async () => {
    const { stack, api } = env;
    const sessionId = await api.createSession();
    stack.model!.enqueue(
      {
        // The output limit cut the input JSON off mid-string, as the real API does.
        content: [{ type: 'tool_use', id: 'toolu_cut', name: 'Bash', input: {}, rawJson: '{"command": "echo should-not-run > ra' }],
        stopReason: 'max_tokens',
      },
      text('Understood.'),
    );
    const res = await api.turn(sessionId, 'do it');
    const result = res.json.events.find((e: any) => e.type === 'tool_result');
    expect(result).toMatchObject({
      toolUseId: 'toolu_cut',
      isError: true,
      content:
        '<tool_use_error>The output token limit was hit while this tool call was being written, so its input is incomplete and it was not run. Call the tool again, breaking large inputs into smaller pieces.</tool_use_error>',
    });
    expect((await api.request('GET', `/v1/sessions/${sessionId}`)).json.workspace.version).toBe(0);
  });

  it('compacts once when the prompt is too long, then retries the call', async () => {
    const { stack, api } = env;
    const sessionId = await api.createSession();
    stack.model!.enqueue(text('First answer.'));
    await api.turn(sessionId, 'first');
    const before = stack.model!.requests.length;
    stack.model!.enqueue(
      { error: { status: 400, type: 'invalid_request_error', message: 'prompt is too long: 210000 tokens > 200000 maximum' } },
      text('SUMMARY: one exchange.'),
      text('Answer after compaction.'),
    );
    const res = await api.turn(sessionId, 'second');
    expect(res.json).toMatchObject({ stopReason: 'end_turn', error: null });
    const calls = stack.model!.requests.slice(before).map((r) => r.body.messages);
    expect(calls).toHaveLength(3);
    expect(JSON.stringify(calls[2]![0]!.content)).toContain('SUMMARY: one exchange.');
    expect((await stack.deps.sessions.get(sessionId))!.reloadFromSeq).toBeGreaterThan(0);
  });
});
