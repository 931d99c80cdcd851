import { afterEach, describe, expect, it } from 'vitest';
import { apiClient } from '../support/api-client.ts';
import { startStackProcess, type StackProcess } from '../support/stack-process.ts';
import { makeTempDir } from '../support/temp-dir.ts';
import { MISSING_RESULT_TEXT } from '../../functions/context/transcript.ts';
import type { MessagesRequest } from '../../local/scripted-model/script.ts';
import { agentCall, firstText } from '../support/agent-requests.ts';
import { bash, text } from '../support/stack-fixture.ts';

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe('a background sub-agent whose process is killed mid-run', () => {
  const tmp = makeTempDir();
  let running: StackProcess | undefined;
  afterEach(async () => {
    await running?.stop();
    tmp.cleanup();
  });

  // Beats every second: the agent's lease is dead three seconds after the kill, not after the minute's expiry.
  const env = { STRATUS_HEARTBEAT_MS: '1000' };

  it('continues from its own log in a new process, loses and repeats nothing, and its notification still arrives', { timeout: 180_000 }, async () => {
    running = await startStackProcess(tmp.dir, env);
    let api = apiClient(running.apiUrl, running.token);
    const sessionId = await api.createSession();
    const agentId = 'agent_toolu_bgk';
    await running.script([
      {
        forFirstText: 'launch the work',
        content: [agentCall('toolu_bgk', { description: 'two steps', prompt: 'SUB-K: two steps', subagent_type: 'general-purpose', run_in_background: true })],
      },
      { forFirstText: 'launch the work', ...text('Launched.') },
      { forFirstText: 'SUB-K', content: [bash('toolu_k1', 'echo one > one.txt')] },
      { forFirstText: 'SUB-K', content: [bash('toolu_k2', 'echo started > started.txt; sleep 60')] },
    ]);
    const launched = await api.turn(sessionId, 'launch the work');
    expect(launched.json).toMatchObject({ stopReason: 'end_turn' });

    // The sub-agent runs on in its own invocation: wait until its second command is running, then kill everything.
    const logPath = `/v1/sessions/${sessionId}/agents/${agentId}/messages`;
    await until('the second command to be called', async () => {
      const log = (await api.request('GET', logPath)).json.messages as { kind: string }[];
      return log.length >= 4 ? true : undefined;
    });
    // Give the command a moment to be running in the sandbox (killed or not, its call has no result yet).
    await new Promise((r) => setTimeout(r, 1_500));
    const before = (await api.request('GET', logPath)).json.messages as { seq: number; kind: string; uuid: string }[];
    expect(before.map((m) => m.kind)).toEqual(['prompt', 'assistant', 'tool_result', 'assistant']);
    await running.kill();
    const killedAt = Date.now();

    running = await startStackProcess(tmp.dir, env);
    api = apiClient(running.apiUrl, running.token);
    await running.script([
      { forFirstText: 'SUB-K', ...text('Both steps done.') },
      { forFirstText: 'launch the work', ...text('Still working.') },
      { forFirstText: 'launch the work', ...text('It is done.') },
    ]);
    const listed = (await api.request('GET', `/v1/sessions/${sessionId}/agents`)).json.agents;
    expect(listed).toEqual([expect.objectContaining({ agentId, background: true, status: 'running' })]);
    // Once its heartbeats have been missed, the parent's next turn finds it stalled and asks for it again.
    await new Promise((r) => setTimeout(r, Math.max(0, killedAt + 4_000 - Date.now())));
    expect((await api.turn(sessionId, 'how is it going?')).json).toMatchObject({ stopReason: 'end_turn' });
    await until('the sub-agent to finish', async () => {
      const agents = (await api.request('GET', `/v1/sessions/${sessionId}/agents`)).json.agents as { status: string }[];
      return agents[0]!.status === 'completed' ? true : undefined;
    });

    // Its log went on from where it was: the same four items, the interrupted call repaired, one more answer.
    const after = (await api.request('GET', logPath)).json.messages as {
      seq: number;
      kind: string;
      uuid: string;
      content: { type: string; tool_use_id?: string; content?: unknown; is_error?: boolean }[];
    }[];
    expect(after.map((m) => [m.seq, m.kind])).toEqual([
      [0, 'prompt'],
      [1, 'assistant'],
      [2, 'tool_result'],
      [3, 'assistant'],
      [4, 'synthetic'],
      [5, 'assistant'],
    ]);
    expect(after.slice(0, 4).map((m) => m.uuid)).toEqual(before.map((m) => m.uuid));
    expect(after[4]!.content).toEqual([{ type: 'tool_result', tool_use_id: 'toolu_k2', content: MISSING_RESULT_TEXT, is_error: true }]);
    // What the new process sent for it: the prompt once, both calls, both results.
    const subRequest = (await running.modelRequests<MessagesRequest>()).find((r) => firstText(r) === 'SUB-K: two steps')!;
    expect(subRequest.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user']);
    expect(JSON.stringify(subRequest.messages).split('SUB-K: two steps')).toHaveLength(2);

    // The turn after it finished hears of it, once, with its final text.
    expect((await api.turn(sessionId, 'and now?')).json).toMatchObject({ stopReason: 'end_turn' });
    const parentRequests = (await running.modelRequests<MessagesRequest>()).filter((r) => firstText(r).startsWith('launch the work'));
    const last = parentRequests.at(-1)!.messages.at(-1)!.content as { type: string; text?: string }[];
    expect(last.map((b) => b.text)).toEqual([expect.stringContaining('<result>Both steps done.</result>'), 'and now?']);
    expect(last[0]!.text).toContain('<usage><total_tokens>');
    expect(last[0]!.text).toContain('<tool_uses>2</tool_uses>');
    expect(
      parentRequests
        .at(-2)!
        .messages.flatMap((m) => (typeof m.content === 'string' ? [] : m.content))
        .some((b) => String(b.text ?? '').includes('<task-notification>')),
    ).toBe(false);

    // Budget counting survived the kill: the session's usage is every assistant message's, the parent's and the agent's.
    const parentLog = await api.messages(sessionId);
    expect(parentLog.filter((m) => m.kind === 'synthetic')).toHaveLength(1);
    const session = (await api.request('GET', `/v1/sessions/${sessionId}`)).json;
    const assistants = [...parentLog, ...after].filter((m: any) => m.kind === 'assistant');
    expect(session.usage.inputTokens).toBe(assistants.reduce((n: number, m: any) => n + m.usage.inputTokens, 0));
    expect(session.usage.outputTokens).toBe(assistants.reduce((n: number, m: any) => n + m.usage.outputTokens, 0));
  });

  it('a foreground sub-agent cut off with its turn is re-entered by the next turn from its own log, not given an error', { timeout: 180_000 }, async () => {
    running = await startStackProcess(tmp.dir, env);
    let api = apiClient(running.apiUrl, running.token);
    const sessionId = await api.createSession();
    const agentId = 'agent_toolu_fg';
    await running.script([
      {
        forFirstText: 'delegate it',
        content: [agentCall('toolu_fg', { description: 'slow step', prompt: 'SUB-F: slow step', subagent_type: 'general-purpose' })],
      },
      { forFirstText: 'SUB-F', content: [bash('toolu_f1', 'sleep 60')] },
    ]);
    // The turn runs in its own invocation (202 at once); the process dies while the sub-agent's command runs.
    const started = await fetch(`${running.apiUrl}/v1/sessions/${sessionId}/turns`, {
      method: 'POST',
      headers: { authorization: `Bearer ${running.token}`, 'content-type': 'application/json', prefer: 'respond-async' },
      body: JSON.stringify({ prompt: 'delegate it' }),
    });
    expect(started.status).toBe(202);
    const logPath = `/v1/sessions/${sessionId}/agents/${agentId}/messages`;
    await until('the sub-agent to call its command', async () => {
      const res = await api.request('GET', logPath);
      return res.status === 200 && res.json.messages.length >= 2 ? true : undefined;
    });
    await new Promise((r) => setTimeout(r, 1_500));
    await running.kill();
    const killedAt = Date.now();

    running = await startStackProcess(tmp.dir, env);
    api = apiClient(running.apiUrl, running.token);
    // Until the dead turn's missed beats free the session (a live-looking lease would answer 409).
    await new Promise((r) => setTimeout(r, Math.max(0, killedAt + 4_000 - Date.now())));
    await running.script([
      { forFirstText: 'SUB-F', ...text('The slow step is done.') },
      { forFirstText: 'delegate it', ...text('Thanks, noted.') },
    ]);
    // The new prompt frees the dead turn's session, then runs the Agent call again before its first model call.
    const next = await api.turn(sessionId, 'carry on');
    expect(next.json).toMatchObject({ stopReason: 'end_turn' });
    const result = next.json.events.find((e: any) => e.type === 'tool_result' && e.toolUseId === 'toolu_fg');
    expect(result).toMatchObject({ isError: false });
    expect(result.content[0]).toEqual({ type: 'text', text: 'The slow step is done.' });

    const agentLog = (await api.request('GET', logPath)).json.messages as { seq: number; kind: string; content: any[] }[];
    expect(agentLog.map((m) => [m.seq, m.kind])).toEqual([
      [0, 'prompt'],
      [1, 'assistant'],
      [2, 'synthetic'],
      [3, 'assistant'],
    ]);
    expect(agentLog[2]!.content).toEqual([{ type: 'tool_result', tool_use_id: 'toolu_f1', content: MISSING_RESULT_TEXT, is_error: true }]);
    const parentLog = await api.messages(sessionId);
    expect(parentLog.map((m) => m.kind)).toEqual(['prompt', 'assistant', 'prompt', 'tool_result', 'assistant']);
    // The model sees the re-entered result first, then the new prompt, in one user message (as a reload gives it).
    const parentRequest = (await running.modelRequests<MessagesRequest>()).filter((r) => firstText(r).startsWith('delegate it')).at(-1)!;
    const last = parentRequest.messages.at(-1)!.content as { type: string; tool_use_id?: string; text?: string }[];
    expect(last.map((b) => b.type)).toEqual(['tool_result', 'text']);
    expect(last[0]!.tool_use_id).toBe('toolu_fg');
    expect(last[1]!.text).toBe('carry on');
  });
});
