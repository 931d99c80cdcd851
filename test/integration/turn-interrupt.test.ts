import { beforeAll, describe, expect, it } from 'vitest';
import { INTERRUPT_MESSAGE, INTERRUPT_MESSAGE_FOR_TOOL_USE } from '../../functions/agent/turn-stop.ts';
import { INTERRUPTED_MESSAGE } from '../../functions/tools/run-tool-use.ts';
import type { LocalStack } from '../../local/stack.ts';
import type { apiClient } from '../support/api-client.ts';
import { useLocalStack } from '../support/stack-fixture.ts';

/**
 * Turn control on the local stack: `Prefer: respond-async` answers at once, and
 * `POST …/interrupt` stops the turn through the durable request its heartbeat reads — killing a
 * running Bash command in the runner, or cutting a model stream short.
 */
describe('interrupting a turn', () => {
  const fx = useLocalStack({ turn: { heartbeatMs: 200 } });
  let stack: LocalStack;
  let api: ReturnType<typeof apiClient>;
  beforeAll(() => {
    ({ stack, api } = fx);
  });

  const startAsync = (sessionId: string, prompt: string) => api.request('POST', `/v1/sessions/${sessionId}/turns`, { prompt }, { prefer: 'respond-async' });

  /** Polls the turn's stored events until `until` holds. */
  async function eventsUntil(sessionId: string, turnId: string, until: (types: string[]) => boolean): Promise<{ type: string; [k: string]: unknown }[]> {
    for (let i = 0; i < 300; i++) {
      const res = await api.request('GET', `/v1/sessions/${sessionId}/turns/${turnId}/events`);
      expect(res.status).toBe(200);
      const events = res.json.events.map((e: { event: unknown }) => e.event ?? e);
      if (until(events.map((e: { type: string }) => e.type))) return events;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error('events never arrived');
  }

  it('answers 202 at once with the turn id and events URL, and the turn runs to its end', async () => {
    const sessionId = await api.createSession();
    stack.model!.enqueue({ content: [{ type: 'text', text: 'done in the background' }], delayMs: 20 });
    const res = await startAsync(sessionId, 'say something');
    expect(res.status).toBe(202);
    expect(res.headers.get('preference-applied')).toBe('respond-async');
    const { turnId, eventsUrl } = res.json;
    expect(turnId).toMatch(/^turn_/);
    expect(eventsUrl).toBe(`/v1/sessions/${sessionId}/turns/${turnId}/events`);
    expect(res.headers.get('location')).toBe(eventsUrl);
    const events = await eventsUntil(sessionId, turnId, (t) => t.includes('turn_end'));
    expect(events.map((e) => e.type).filter((t) => t !== 'text_delta')).toEqual(['turn_start', 'assistant_message', 'turn_end']);
    expect(events.at(-1)).toMatchObject({ stopReason: 'end_turn' });
    expect((await api.messages(sessionId)).map((m) => m.kind)).toEqual(['prompt', 'assistant']);
  });

  it('kills a long Bash command, gives its tool_use the interrupted result, and frees the session at once', async () => {
    const sessionId = await api.createSession();
    stack.model!.enqueue({ content: [{ type: 'tool_use', id: 'toolu_long', name: 'Bash', input: { command: 'echo started; sleep 120; echo finished' } }] });
    const { json } = await startAsync(sessionId, 'run the long thing');
    await eventsUntil(sessionId, json.turnId, (t) => t.includes('tool_use'));
    // Let the command reach the runner.
    await new Promise((r) => setTimeout(r, 1_000));
    const interrupted = await api.request('POST', `/v1/sessions/${sessionId}/turns/${json.turnId}/interrupt`);
    // 200 means the turn has ended: its Bash call returned, so the 120 s command was killed.
    expect(interrupted.status).toBe(200);
    expect(interrupted.json).toMatchObject({ state: 'stopped', turnId: json.turnId, lastTurn: { stopReason: 'interrupted' } });

    const events = await eventsUntil(sessionId, json.turnId, (t) => t.includes('turn_end'));
    const result = events.find((e) => e.type === 'tool_result')!;
    expect(result).toMatchObject({ toolUseId: 'toolu_long', isError: true, content: INTERRUPTED_MESSAGE });
    expect(events.at(-1)).toMatchObject({ type: 'turn_end', stopReason: 'interrupted' });
    const messages = await api.messages(sessionId);
    expect(messages.map((m) => m.kind)).toEqual(['prompt', 'assistant', 'tool_result', 'synthetic']);
    expect(messages.at(-1).content).toEqual([{ type: 'text', text: INTERRUPT_MESSAGE_FOR_TOOL_USE }]);

    // The next turn is accepted at once, and the model sees the interruption.
    stack.model!.enqueue({ content: [{ type: 'text', text: 'ok, stopped' }] });
    const next = await api.turn(sessionId, 'never mind');
    expect(next.status).toBe(200);
    expect(next.json.stopReason).toBe('end_turn');
    const sent = stack.model!.requests.at(-1)!.body.messages;
    expect(JSON.stringify(sent)).toContain(INTERRUPT_MESSAGE_FOR_TOOL_USE);

    // The stop marker stays in storage for a day: a later turn's call that happens to carry the
    // same tool_use id (a model or proxy reusing ids) must not be killed by it.
    stack.model!.enqueue(
      { content: [{ type: 'tool_use', id: 'toolu_long', name: 'Bash', input: { command: 'sleep 1; echo ran-to-the-end' } }] },
      { content: [{ type: 'text', text: 'done' }] },
    );
    const again = await api.turn(sessionId, 'run a short one');
    expect(again.json.stopReason).toBe('end_turn');
    const last = (await api.messages(sessionId)).filter((m) => m.kind === 'tool_result').at(-1);
    expect(JSON.stringify(last.content)).toContain('ran-to-the-end');
  });

  it('cuts a model stream short, keeping the text that arrived', async () => {
    const sessionId = await api.createSession();
    const long = 'word '.repeat(400);
    stack.model!.enqueue({ content: [{ type: 'text', text: long }], delayMs: 50 });
    const { json } = await startAsync(sessionId, 'talk for a while');
    await eventsUntil(sessionId, json.turnId, (t) => t.includes('text_delta'));
    const interrupted = await api.request('POST', `/v1/sessions/${sessionId}/turns/${json.turnId}/interrupt`);
    expect(interrupted.status).toBe(200);
    expect(interrupted.json.lastTurn.stopReason).toBe('interrupted');
    const messages = await api.messages(sessionId);
    expect(messages.map((m) => m.kind)).toEqual(['prompt', 'assistant', 'synthetic']);
    const kept = messages[1].content[0].text as string;
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.length).toBeLessThan(long.length);
    expect(long.startsWith(kept)).toBe(true);
    expect(messages[2].content).toEqual([{ type: 'text', text: INTERRUPT_MESSAGE }]);
    const session = (await api.request('GET', `/v1/sessions/${sessionId}`)).json;
    expect(session).toMatchObject({ status: 'idle', currentTurnId: null, lastTurn: { turnId: json.turnId, stopReason: 'interrupted' } });
  });

  it('answers 409 for a turn that already ended and 404 for one that never existed', async () => {
    const sessionId = await api.createSession();
    stack.model!.enqueue({ content: [{ type: 'text', text: 'quick' }] });
    const done = await api.turn(sessionId, 'hi');
    const ended = await api.request('POST', `/v1/sessions/${sessionId}/turns/${done.json.turnId}/interrupt`);
    expect(ended.status).toBe(409);
    expect(ended.json.error.code).toBe('turn_not_running');
    const unknown = await api.request('POST', `/v1/sessions/${sessionId}/turns/turn_nope/interrupt`);
    expect(unknown.status).toBe(404);
  });
});
