import { describe, expect, it } from 'vitest';
import { INTERRUPT_MESSAGE_FOR_TOOL_USE } from '../../functions/agent/turn-stop.ts';
import { INTERRUPTED_MESSAGE } from '../../functions/tools/run-tool-use.ts';
import { demoBrain } from '../../local/scripted-model/demo-brain.ts';
import { useLocalStack } from '../support/stack-fixture.ts';

/**
 * The model `npm start` runs without an API key, driven only by prompts as a newcomer would:
 * after an interrupt, the next prompt arrives merged with the interrupted call's result and the
 * interrupt note (one user message, as the reference sends it), and it must still be acted on.
 */
describe('the demo model after an interrupt', () => {
  const fx = useLocalStack({ brain: demoBrain, turn: { heartbeatMs: 200 } });

  async function eventTypes(sessionId: string, turnId: string): Promise<string[]> {
    const res = await fx.api.request('GET', `/v1/sessions/${sessionId}/turns/${turnId}/events`);
    return res.json.events.map((e: { event?: { type: string }; type?: string }) => (e.event ?? e).type);
  }

  it('runs the command of the prompt that follows an interrupted sleep', { timeout: 60_000 }, async () => {
    const sessionId = await fx.api.createSession();
    const started = await fx.api.request('POST', `/v1/sessions/${sessionId}/turns`, { prompt: 'please run `sleep 120`' }, { prefer: 'respond-async' });
    expect(started.status).toBe(202);
    const turnId = started.json.turnId as string;
    for (let i = 0; i < 300 && !(await eventTypes(sessionId, turnId)).includes('tool_use'); i++) await new Promise((r) => setTimeout(r, 100));
    // Let the command reach the runner.
    await new Promise((r) => setTimeout(r, 1_000));
    const interrupted = await fx.api.request('POST', `/v1/sessions/${sessionId}/turns/${turnId}/interrupt`);
    expect(interrupted.status, interrupted.text).toBeLessThan(300);
    // On a loaded machine the stop can outlast the request's wait (202 stopping): follow it to its end.
    for (let i = 0; i < 300 && !(await eventTypes(sessionId, turnId)).includes('turn_end'); i++) await new Promise((r) => setTimeout(r, 100));
    expect((await fx.api.request('GET', `/v1/sessions/${sessionId}`)).json.lastTurn).toMatchObject({ turnId, stopReason: 'interrupted' });

    const next = await fx.api.turn(sessionId, 'please run `echo after-interrupt`');
    expect(next.status, next.text).toBe(200);
    expect(next.json.stopReason).toBe('end_turn');
    const results = (await fx.api.messages(sessionId)).filter((m) => m.kind === 'tool_result');
    expect(results).toHaveLength(2);
    expect(results[1].content[0]).toMatchObject({ type: 'tool_result', content: 'after-interrupt' });

    // What the model was sent: one user message holding the interrupted result, the note and the
    // new prompt, in that order (the shape Claude Code 2.1.88 sends after an interrupt).
    const request = fx.stack.model!.requests.find((r) => JSON.stringify(r.body.messages.at(-1)).includes('after-interrupt'))!;
    const last = request.body.messages.at(-1)!;
    expect(last.role).toBe('user');
    expect(last.content).toEqual([
      expect.objectContaining({ type: 'tool_result', is_error: true, content: INTERRUPTED_MESSAGE }),
      { type: 'text', text: INTERRUPT_MESSAGE_FOR_TOOL_USE },
      expect.objectContaining({ type: 'text', text: 'please run `echo after-interrupt`' }),
    ]);
  });
});
