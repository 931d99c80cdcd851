import { beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../local/stack.ts';
import type { MessagesRequest } from '../../local/scripted-model/script.ts';
import type { apiClient } from '../support/api-client.ts';
import { asyncLaunchedText } from '../../functions/tools/agent/agent-tool.ts';
import { ASYNC_AGENT_ALLOWED_TOOLS } from '../../functions/tools/agent/agent-tool-filter.ts';
import { agentLogId } from '../../functions/stores/agent-log.ts';
import { agentCall, firstText, systemText } from '../support/agent-requests.ts';
import { bash, text, useRoutedLocalStack } from '../support/stack-fixture.ts';

/** Every text block of a request's last user message, in order. */
function lastUserTexts(body: MessagesRequest): string[] {
  const last = body.messages.at(-1)!;
  return typeof last.content === 'string' ? [last.content] : last.content.filter((b) => b.type === 'text').map((b) => String(b.text));
}

const bgCall = (id: string, prompt: string, description = 'read the notes') =>
  agentCall(id, { description, prompt, subagent_type: 'general-purpose', run_in_background: true });

describe('background sub-agents (run_in_background) on the local stack', () => {
  const { fx, routed } = useRoutedLocalStack();
  let stack: LocalStack;
  let api: ReturnType<typeof apiClient>;
  beforeAll(() => {
    ({ stack, api } = fx);
  });

  async function untilFinished(sessionId: string, agentId: string) {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const record = await stack.deps.backgroundAgents.get(agentLogId(sessionId, agentId));
      if (record && record.status !== 'running') return record;
      if (Date.now() > deadline) throw new Error(`background agent ${agentId} never finished: ${JSON.stringify(record)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  it('gives a background sub-agent the project context its parent has: instructions block and environment section', async () => {
    const sessionId = await api.createSession({ 'CLAUDE.md': 'Use tabs.\n', 'notes.txt': 'alpha\n' });
    let parentCalls = 0;
    let sub: MessagesRequest | undefined;
    let parent: MessagesRequest | undefined;
    routed.route = (body) => {
      if (firstText(body).startsWith('context for the agent')) {
        parent ??= body;
        return ++parentCalls === 1 ? { content: [bgCall('toolu_bgctx', 'SUB-CTX: look')] } : text('Launched.');
      }
      if (firstText(body) === 'SUB-CTX: look') {
        sub ??= body;
        return text('Looked.');
      }
      return undefined;
    };
    expect((await api.turn(sessionId, 'context for the agent')).json).toMatchObject({ stopReason: 'end_turn' });
    await untilFinished(sessionId, 'agent_toolu_bgctx');
    const opening = (b: MessagesRequest) => (b.messages[0]!.content as unknown as { text: string }[])[0]!.text;
    expect(opening(sub!)).toBe(opening(parent!));
    expect(opening(sub!)).toContain("Instructions from /workspace/CLAUDE.md (the project's CLAUDE.md):\n\nUse tabs.");
    expect(systemText(sub!)).toContain('\n# Environment\n');
  });

  it('answers the launch at once, runs in its own invocation with the async tools, and reports at the next turn', async () => {
    const sessionId = await api.createSession({ 'notes.txt': 'alpha\n' });
    let parentCalls = 0;
    routed.route = (body) => {
      if (firstText(body).startsWith('look at the notes')) {
        parentCalls += 1;
        if (parentCalls === 1) return { content: [bgCall('toolu_bg', 'SUB-BG: read notes')] };
        return text(parentCalls === 2 ? 'Launched it.' : 'It found alpha.');
      }
      if (firstText(body) === 'SUB-BG: read notes') {
        return body.messages.length > 1
          ? text('The notes say alpha.')
          : { content: [{ type: 'tool_use', id: 'toolu_bg_read', name: 'Read', input: { file_path: '/workspace/notes.txt' } }] };
      }
      return undefined;
    };
    const res = await api.turn(sessionId, 'look at the notes');
    expect(res.json).toMatchObject({ stopReason: 'end_turn' });
    const launch = res.json.events.find((e: any) => e.type === 'tool_result' && e.toolUseId === 'toolu_bg');
    expect(launch).toMatchObject({ isError: false, content: [{ type: 'text', text: asyncLaunchedText('agent_toolu_bg') }] });
    expect(asyncLaunchedText('agent_toolu_bg')).toMatch(/^Async agent launched successfully\.\nagentId: agent_toolu_bg /);

    const record = await untilFinished(sessionId, 'agent_toolu_bg');
    expect(record).toMatchObject({
      status: 'completed',
      agentType: 'general-purpose',
      modelCalls: 2,
      toolUses: 1,
      result: { content: [{ type: 'text', text: 'The notes say alpha.' }] },
    });
    // Its tools: the async allow-list only (no Agent, TaskOutput, TaskStop, AskUserQuestion…).
    const subRequest = stack.model!.requests.find((r) => firstText(r.body) === 'SUB-BG: read notes')!;
    const tools = subRequest.body.tools!.map((t) => t.name);
    expect(tools).toContain('Read');
    expect(tools.filter((t) => !ASYNC_AGENT_ALLOWED_TOOLS.has(t))).toEqual([]);
    // Its own log, as any sub-agent's.
    const log = await api.request('GET', `/v1/sessions/${sessionId}/agents/agent_toolu_bg/messages`);
    expect(log.json.messages.map((m: any) => m.kind)).toEqual(['prompt', 'assistant', 'tool_result', 'assistant']);
    const listed = await api.request('GET', `/v1/sessions/${sessionId}/agents`);
    expect(listed.json.agents).toEqual([expect.objectContaining({ agentId: 'agent_toolu_bg', status: 'completed', background: true })]);

    // The next turn: the notification goes in before the prompt, once.
    const next = await api.turn(sessionId, 'what did it find?');
    expect(next.json).toMatchObject({ stopReason: 'end_turn' });
    const third = stack.model!.requests.filter((r) => firstText(r.body).startsWith('look at the notes'))[2]!;
    const texts = lastUserTexts(third.body);
    expect(texts).toHaveLength(2);
    expect(texts[0]).toMatch(
      /^<task-notification>\n<task-id>agent_toolu_bg<\/task-id>\n<tool-use-id>toolu_bg<\/tool-use-id>\n<status>completed<\/status>\n<summary>Agent "read the notes" completed<\/summary>\n<result>The notes say alpha\.<\/result>\n<usage><total_tokens>\d+<\/total_tokens><tool_uses>1<\/tool_uses><duration_ms>\d+<\/duration_ms><\/usage>\n<\/task-notification>$/,
    );
    expect(texts[1]).toBe('what did it find?');
    const parentLog = await api.messages(sessionId);
    expect(parentLog.map((m) => m.kind)).toEqual(['prompt', 'assistant', 'tool_result', 'assistant', 'synthetic', 'prompt', 'assistant']);

    // Its spend is the session's too, once reported: the session's usage is every assistant message's.
    const session = await api.request('GET', `/v1/sessions/${sessionId}`);
    const all = [...parentLog, ...log.json.messages].filter((m: any) => m.kind === 'assistant');
    expect(session.json.usage.inputTokens).toBe(all.reduce((n: number, m: any) => n + m.usage.inputTokens, 0));

    // A third turn reports nothing again.
    const again = await api.turn(sessionId, 'anything else?');
    expect(again.json).toMatchObject({ stopReason: 'end_turn' });
    const fourth = stack.model!.requests.filter((r) => firstText(r.body).startsWith('look at the notes'))[3]!;
    expect(lastUserTexts(fourth.body)).toEqual(['anything else?']);

    // Deleting the session removes the agent's record with its log.
    expect((await api.request('DELETE', `/v1/sessions/${sessionId}`)).status).toBe(202);
    for (let i = 0; i < 300 && (await stack.deps.sessions.get(sessionId)); i++) await new Promise((r) => setTimeout(r, 100));
    expect(await stack.deps.sessions.get(sessionId)).toBeUndefined();
    expect(await stack.deps.backgroundAgents.get(agentLogId(sessionId, 'agent_toolu_bg'))).toBeUndefined();
    expect(await stack.deps.messages.loadFrom(agentLogId(sessionId, 'agent_toolu_bg'))).toEqual([]);
  }, 120_000);

  it('reaches a parent turn that is still running, after the tool results it was waiting on', async () => {
    const sessionId = await api.createSession();
    let parentCalls = 0;
    routed.route = (body) => {
      if (firstText(body).startsWith('launch and wait')) {
        parentCalls += 1;
        if (parentCalls === 1) return { content: [bgCall('toolu_bg2', 'SUB-BG2: say hi', 'say hi')] };
        // The parent keeps working (a command that outlasts the sub-agent) before its next call.
        if (parentCalls === 2) return { content: [bash('toolu_wait', 'sleep 4')] };
        return text('Heard back.');
      }
      if (firstText(body) === 'SUB-BG2: say hi') return text('hi from the background');
      return undefined;
    };
    const res = await api.turn(sessionId, 'launch and wait');
    expect(res.json).toMatchObject({ stopReason: 'end_turn' });
    const third = stack.model!.requests.filter((r) => firstText(r.body).startsWith('launch and wait'))[2]!;
    const last = third.body.messages.at(-1)!.content as { type: string; tool_use_id?: string; text?: string }[];
    expect(last.map((b) => b.type)).toEqual(['tool_result', 'text']);
    expect(last[0]!.tool_use_id).toBe('toolu_wait');
    expect(last[1]!.text).toContain('<result>hi from the background</result>');
    // Recorded where it was sent, and not sent again by the next turn.
    const parentLog = await api.messages(sessionId);
    expect(parentLog.map((m) => m.kind)).toEqual(['prompt', 'assistant', 'tool_result', 'assistant', 'tool_result', 'synthetic', 'assistant']);
    expect((await stack.deps.backgroundAgents.get(agentLogId(sessionId, 'agent_toolu_bg2')))!.notified).toBe(true);
  }, 120_000);

  it('stops at the session budget like a turn, and reports the failure', async () => {
    const sessionId = await api.createSession();
    const patched = await api.request('PATCH', `/v1/sessions/${sessionId}`, { budgets: { maxModelCallsPerTurn: 2 } });
    expect(patched.status).toBe(200);
    let parentCalls = 0;
    let subCalls = 0;
    routed.route = (body) => {
      if (firstText(body).startsWith('launch a long one')) {
        parentCalls += 1;
        return parentCalls === 1 ? { content: [bgCall('toolu_bg3', 'SUB-BG3: loop', 'loop')] } : text(`parent ${parentCalls}`);
      }
      if (firstText(body) === 'SUB-BG3: loop') {
        subCalls += 1;
        return { content: [bash(`toolu_loop_${subCalls}`, 'true')] };
      }
      return undefined;
    };
    expect((await api.turn(sessionId, 'launch a long one')).json).toMatchObject({ stopReason: 'end_turn' });
    const record = await untilFinished(sessionId, 'agent_toolu_bg3');
    // Its own calls count as a turn's: two made, the third refused.
    expect(subCalls).toBe(2);
    expect(record).toMatchObject({ status: 'failed', modelCalls: 2, result: { error: 'Budget maxModelCallsPerTurn exhausted: 2 spent of 2.' } });
    expect((await api.turn(sessionId, 'and?')).json).toMatchObject({ stopReason: 'end_turn' });
    const last = stack.model!.requests.filter((r) => firstText(r.body).startsWith('launch a long one')).at(-1)!;
    expect(lastUserTexts(last.body)[0]).toContain(
      '<status>failed</status>\n<summary>Agent "loop" failed: Budget maxModelCallsPerTurn exhausted: 2 spent of 2.</summary>',
    );
  }, 120_000);

  it('refuses a background fork', async () => {
    const sessionId = await api.createSession();
    let parentCalls = 0;
    routed.route = (body) => {
      if (!firstText(body).startsWith('fork in the background')) return undefined;
      parentCalls += 1;
      return parentCalls === 1 ? { content: [agentCall('toolu_bgfork', { description: 'fork', prompt: 'go', run_in_background: true })] } : text('ok');
    };
    const res = await api.turn(sessionId, 'fork in the background');
    const result = res.json.events.find((e: any) => e.type === 'tool_result' && e.toolUseId === 'toolu_bgfork');
    expect(result).toMatchObject({ isError: true });
    expect(JSON.stringify(result.content)).toContain('run_in_background needs a subagent_type');
  }, 60_000);
});
