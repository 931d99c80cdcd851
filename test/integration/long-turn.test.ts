import { beforeAll, describe, expect, it } from 'vitest';
import { continueTurn, startTurn } from '../../functions/turn/turn.ts';
import type { LocalStack } from '../../local/stack.ts';
import { type apiClient, parseSse } from '../support/api-client.ts';
import { useLocalStack } from '../support/stack-fixture.ts';

/**
 * A turn longer than one invocation: with a 1 ms simulated invocation budget, the turn
 * checkpoints after every round of tool results and continues in a fresh asynchronous
 * invocation of the API function (through the Lambda Invoke API), as it would on Lambda.
 */
describe('turns longer than one invocation', () => {
  const fx = useLocalStack({ turn: { invocationBudgetMs: 1, checkpointMarginMs: 0 } });
  let stack: LocalStack;
  let api: ReturnType<typeof apiClient>;
  beforeAll(() => {
    ({ stack } = fx);
    ({ api } = fx);
  });

  const threeRounds = () =>
    stack.model!.enqueue(
      { content: [{ type: 'tool_use', id: 'toolu_1', name: 'Bash', input: { command: 'echo one > one.txt && echo 1' } }] },
      { content: [{ type: 'tool_use', id: 'toolu_2', name: 'Bash', input: { command: 'cat one.txt && echo 2' } }] },
      { content: [{ type: 'tool_use', id: 'toolu_3', name: 'Read', input: { file_path: '/workspace/one.txt' } }] },
      { content: [{ type: 'text', text: 'Three rounds, three invocations later: done.' }] },
    );

  it('streams until the checkpoint, then the event log carries the rest to turn_end', async () => {
    const sessionId = await api.createSession();
    threeRounds();
    const { events: firstPart } = await api.turnSse(sessionId, 'work in rounds');
    const continued = firstPart.at(-1)!;
    expect(continued.type).toBe('turn_continued');
    if (continued.type !== 'turn_continued') throw new Error('unreachable');
    expect(firstPart.map((e) => e.type)).toEqual(['turn_start', 'assistant_message', 'tool_use', 'tool_result', 'turn_continued']);

    const follow = await fetch(`${stack.apiUrl}${continued.eventsUrl}`, {
      headers: { authorization: `Bearer ${stack.token}`, accept: 'text/event-stream', 'last-event-id': String(firstPart.length - 1) },
    });
    const rest = parseSse(await follow.text());
    expect(rest.map((e) => e.type)).toEqual([
      'assistant_message',
      'tool_use',
      'tool_result',
      'turn_continued',
      'assistant_message',
      'tool_use',
      'tool_result',
      'turn_continued',
      'text_delta',
      'assistant_message',
      'turn_end',
    ]);
    expect(rest.at(-1)).toMatchObject({ type: 'turn_end', stopReason: 'end_turn' });
    const results = rest.filter((e) => e.type === 'tool_result');
    expect(results.map((r) => (r.type === 'tool_result' ? r.content : ''))).toEqual(['one\n2', '1\tone\n2\t']);

    const messages = await api.messages(sessionId);
    expect(messages.map((m) => m.kind)).toEqual(['prompt', 'assistant', 'tool_result', 'assistant', 'tool_result', 'assistant', 'tool_result', 'assistant']);
    const session = (await api.request('GET', `/v1/sessions/${sessionId}`)).json;
    expect(session).toMatchObject({ status: 'idle', turnCount: 1, messageCount: 8, lastTurn: { stopReason: 'end_turn' } });
    // Each continuation reloaded the log: the final model call saw the whole conversation.
    expect(stack.model!.requests.at(-1)!.body.messages).toHaveLength(7);
  });

  it('a JSON caller gets the final result of a continued turn', async () => {
    const sessionId = await api.createSession();
    threeRounds();
    const res = await api.turn(sessionId, 'work in rounds');
    expect(res.status).toBe(200);
    expect(res.json.stopReason).toBe('end_turn');
    expect(res.json.events.filter((e: { type: string }) => e.type === 'tool_result')).toHaveLength(3);
  });

  it('ignores a duplicate delivery of a continuation', async () => {
    const sessionId = await api.createSession();
    stack.model!.enqueue({ content: [{ type: 'text', text: 'short' }] });
    await api.turn(sessionId, 'quick');
    const before = stack.model!.requests.length;
    const outcome = await continueTurn(stack.deps, {
      kind: 'continue_turn',
      sessionId,
      turnId: 'turn_old',
      handoffOwner: 'continuation/turn_old/1',
      nextEventSeq: 5,
      modelCalls: 1,
      startedAt: 0,
    });
    expect(outcome).toBeUndefined();
    expect(stack.model!.requests.length).toBe(before);
    expect((await api.messages(sessionId)).map((m) => m.kind)).toEqual(['prompt', 'assistant']);
  });

  it('ends the turn once, after turn_continued, when the continuation cannot be scheduled', async () => {
    const sessionId = await api.createSession();
    stack.model!.enqueue({ content: [{ type: 'tool_use', id: 'toolu_h', name: 'Bash', input: { command: 'echo 1' } }] });
    const refusing = { ...stack.deps, continuations: { schedule: async () => Promise.reject(new Error('invoke refused')) } };
    const turn = await startTurn(refusing, { sessionId, tenantId: 'local', prompt: 'one round' });
    const summary = await turn.done;
    expect(summary).toMatchObject({ stopReason: 'internal_error', error: expect.stringContaining('could not be continued') });
    const log = await stack.deps.events.listAfter(sessionId, turn.turnId, -1);
    expect(log.map((e) => e.event.type)).toEqual(['turn_start', 'assistant_message', 'tool_use', 'tool_result', 'turn_continued', 'turn_end']);
    expect(log.map((e) => e.seq)).toEqual([0, 1, 2, 3, 4, 5]);
    const session = await stack.deps.sessions.get(sessionId);
    expect(session).toMatchObject({ status: 'failed', lastTurn: { stopReason: 'internal_error' } });
    expect(session?.lease).toBeUndefined();
  });
});
