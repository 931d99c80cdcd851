import { afterEach, describe, expect, it } from 'vitest';
import { apiClient } from '../support/api-client.ts';
import { startStackProcess, type StackProcess } from '../support/stack-process.ts';
import { makeTempDir } from '../support/temp-dir.ts';
import { MISSING_RESULT_TEXT } from '../../functions/agent/transcript.ts';
import { withoutCacheControl } from '../support/request-bodies.ts';

async function script(modelUrl: string, responses: unknown[]) {
  const res = await fetch(`${modelUrl}/_script`, { method: 'POST', body: JSON.stringify(responses) });
  expect(res.status).toBe(200);
}

describe('a process killed mid-turn', () => {
  const tmp = makeTempDir();
  let running: StackProcess | undefined;
  afterEach(async () => {
    await running?.stop();
    tmp.cleanup();
  });

  it('keeps every message written before the kill, and the next turn repairs the dangling tool_use', async () => {
    running = await startStackProcess(tmp.dir, { STRATUS_LEASE_MS: '1500' });
    let api = apiClient(running.apiUrl, running.token);
    const sessionId = await api.createSession({ 'a.txt': 'alpha\n' });
    await script(running.modelUrl, [
      { content: [{ type: 'text', text: 'Working.' }, { type: 'tool_use', id: 'toolu_slow', name: 'Bash', input: { command: 'echo started > started.txt; sleep 30' } }] },
    ]);

    // Start the turn and kill the server as soon as the tool is running.
    const turn = fetch(`${running.apiUrl}/v1/sessions/${sessionId}/turns`, {
      method: 'POST',
      headers: { authorization: `Bearer ${running.token}`, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ prompt: 'do the slow thing' }),
    }).then((r) => r.text()).catch(() => 'connection lost');
    const deadline = Date.now() + 15_000;
    for (;;) {
      const messages = await api.messages(sessionId);
      if (messages.some((m) => m.kind === 'assistant')) break;
      if (Date.now() > deadline) throw new Error('the assistant message never appeared');
      await new Promise((r) => setTimeout(r, 50));
    }
    await running.kill();
    await turn;

    // A new process on the same data folder: everything written before the kill is there.
    running = await startStackProcess(tmp.dir, { STRATUS_LEASE_MS: '1500' });
    api = apiClient(running.apiUrl, running.token);
    const before = await api.messages(sessionId);
    expect(before.map((m) => m.kind)).toEqual(['prompt', 'assistant']);
    expect(before[1].content[1]).toMatchObject({ type: 'tool_use', id: 'toolu_slow' });
    const status = await api.request('GET', `/v1/sessions/${sessionId}`);
    expect(status.json.status).toMatch(/running|interrupted/);

    // Until the dead turn's lease lapses the session answers 409; then the next turn runs and the
    // transcript is valid again.
    await script(running.modelUrl, [{ content: [{ type: 'text', text: 'Recovered.' }] }]);
    let res = await api.turn(sessionId, 'carry on');
    const leaseDeadline = Date.now() + 10_000;
    while (res.status === 409 && Date.now() < leaseDeadline) {
      await new Promise((r) => setTimeout(r, 200));
      res = await api.turn(sessionId, 'carry on');
    }
    expect(res.status).toBe(200);
    expect(res.json.error).toBeNull();
    expect(res.json.stopReason).toBe('end_turn');

    const after = await api.messages(sessionId);
    expect(after.map((m) => m.kind)).toEqual(['prompt', 'assistant', 'synthetic', 'prompt', 'assistant']);
    expect(after[2].content).toEqual([{ type: 'tool_result', tool_use_id: 'toolu_slow', content: MISSING_RESULT_TEXT, is_error: true }]);
    const models = (await (await fetch(`${running.modelUrl}/_requests`)).json()) as { messages: { role: string; content: unknown[] }[] }[];
    const sent = models.at(-1)!.messages;
    expect(sent.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(sent[2]!.content[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_slow', is_error: true });
    // (the newest block carries the moving prompt-cache breakpoint)
    expect(withoutCacheControl(sent[2]!.content[1])).toEqual({ type: 'text', text: 'carry on' });
    expect((await api.request('GET', `/v1/sessions/${sessionId}`)).json).toMatchObject({ status: 'idle', turnCount: 1 });
  });
});

describe('a crash between appending a message and moving the session counter', () => {
  it('does not make the next turn overwrite or collide with the message', async () => {
    const { startLocalStack } = await import('../../local/stack.ts');
    const tmp = makeTempDir();
    const stack = await startLocalStack({ dataDir: tmp.dir });
    try {
      const api = apiClient(stack.apiUrl, stack.token);
      const sessionId = await api.createSession();
      // What a process killed right after the append leaves behind: seq 0 exists, the counter says 0.
      await stack.deps.messages.append({
        sessionId, seq: 0, uuid: 'msg_orphan', turnId: 'turn_dead', kind: 'prompt', role: 'user',
        content: [{ type: 'text', text: 'written just before the crash' }], createdAt: new Date().toISOString(),
      });
      stack.model!.enqueue({ content: [{ type: 'text', text: 'fine' }] });
      const res = await api.turn(sessionId, 'next');
      expect(res.json).toMatchObject({ stopReason: 'end_turn', error: null });
      const messages = await api.messages(sessionId);
      expect(messages.map((m) => [m.seq, m.content[0].text])).toEqual([
        [0, 'written just before the crash'],
        [1, 'next'],
        [2, 'fine'],
      ]);
    } finally {
      await stack.stop();
      tmp.cleanup();
    }
  });
});
