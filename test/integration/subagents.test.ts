import { beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../local/stack.ts';
import type { MessagesRequest, ScriptedResponse } from '../../local/scripted-model/script.ts';
import type { apiClient } from '../support/api-client.ts';
import { FORK_IN_FORK_MESSAGE } from '../../functions/tools/agent/agent-tool.ts';
import { agentCall, firstText, systemText } from '../support/agent-requests.ts';
import { prefixProblem, rawMember } from '../support/request-bodies.ts';
import { text, useRoutedLocalStack } from '../support/stack-fixture.ts';

/** Every text of a request's user messages: a fork's requests repeat the parent's first message, its directive comes later. */
function userTexts(body: MessagesRequest): string {
  return body.messages
    .filter((m) => m.role === 'user')
    .map((m) =>
      typeof m.content === 'string'
        ? m.content
        : m.content
            .filter((b) => b.type === 'text')
            .map((b) => String(b.text))
            .join(''),
    )
    .join('\n');
}

/** The tool_result blocks of a request's last message, as the model sees them. */
function lastResults(body: MessagesRequest): { tool_use_id: string; is_error?: boolean; content: unknown }[] {
  const last = body.messages.at(-1)!;
  return typeof last.content === 'string' ? [] : (last.content.filter((b) => b.type === 'tool_result') as never);
}

describe('sub-agents (the Agent tool) on the local stack', () => {
  const { fx, routed } = useRoutedLocalStack();
  let stack: LocalStack;
  let api: ReturnType<typeof apiClient>;
  beforeAll(() => {
    ({ stack, api } = fx);
  });

  it("runs an Explore sub-agent with its own log and tools; its final text is the parent's tool_result", async () => {
    const sessionId = await api.createSession({ 'notes.txt': 'alpha\n' });
    let parentCalls = 0;
    routed.route = (body) => {
      if (firstText(body).startsWith('find the notes')) {
        return ++parentCalls === 1
          ? { content: [agentCall('toolu_explore', { description: 'find notes', prompt: 'SUB: read notes', subagent_type: 'Explore' })] }
          : text('Parent done.');
      }
      if (firstText(body) === 'SUB: read notes') {
        const seenResult = body.messages.length > 1;
        return seenResult
          ? text('The notes say alpha.')
          : { content: [{ type: 'tool_use', id: 'toolu_sub_read', name: 'Read', input: { file_path: '/workspace/notes.txt' } }] };
      }
      return undefined;
    };
    const res = await api.turn(sessionId, 'find the notes');
    expect(res.json).toMatchObject({ stopReason: 'end_turn' });
    const subRequest = stack.model!.requests.find((r) => firstText(r.body) === 'SUB: read notes')!;
    // Explore's tools: read-only ones, no Agent, Write, Edit, TaskOutput or TaskStop.
    expect(subRequest.body.tools!.map((t) => t.name)).toEqual([
      'Bash',
      'CronCreate',
      'CronDelete',
      'CronList',
      'Glob',
      'Grep',
      'Read',
      'SendMessage',
      'Skill',
      'TodoWrite',
      'WebFetch',
    ]);
    expect(systemText(subRequest.body)).toContain('You are the search sub-agent of Stratus');
    const result = res.json.events.find((e: any) => e.type === 'tool_result' && e.toolUseId === 'toolu_explore');
    // A one-shot built-in: the text alone, no agentId/usage trailer (as the reference).
    expect(result).toMatchObject({ isError: false, content: [{ type: 'text', text: 'The notes say alpha.' }] });
    // Progress reached the client tagged with the sub-agent's id.
    const progress = res.json.events.filter((e: any) => e.type === 'tool_progress' && e.toolUseId === 'toolu_explore');
    expect(progress.map((e: any) => e.progress.type)).toEqual(['agent_start', 'assistant_message', 'tool_result', 'assistant_message', 'agent_end']);
    expect(new Set(progress.map((e: any) => e.progress.agentId))).toEqual(new Set(['agent_toolu_explore']));

    // Its own log, listed through the API; the session's usage counts its calls.
    const agents = await api.request('GET', `/v1/sessions/${sessionId}/agents`);
    expect(agents.status).toBe(200);
    expect(agents.json.agents).toEqual([
      expect.objectContaining({
        agentId: 'agent_toolu_explore',
        toolUseId: 'toolu_explore',
        subagentType: 'Explore',
        description: 'find notes',
        status: 'completed',
      }),
    ]);
    const log = await api.request('GET', `/v1/sessions/${sessionId}/agents/agent_toolu_explore/messages`);
    expect(log.json.messages.map((m: any) => [m.seq, m.kind])).toEqual([
      [0, 'prompt'],
      [1, 'assistant'],
      [2, 'tool_result'],
      [3, 'assistant'],
    ]);
    expect(log.json.messages[2].content[0]).toMatchObject({ tool_use_id: 'toolu_sub_read', content: '1\talpha\n2\t' });
    const parentLog = await api.messages(sessionId);
    expect(parentLog.map((m) => m.kind)).toEqual(['prompt', 'assistant', 'tool_result', 'assistant']);
    const session = await api.request('GET', `/v1/sessions/${sessionId}`);
    expect(session.json.budgets.maxModelCallsPerTurn.spent).toBe(0);
    expect(session.json.lastTurn.usage.inputTokens).toBeGreaterThan(0);
    const assistantUsage = [...parentLog, ...log.json.messages]
      .filter((m: any) => m.kind === 'assistant')
      .reduce((n: number, m: any) => n + m.usage.inputTokens, 0);
    expect(session.json.usage.inputTokens).toBe(assistantUsage);
  }, 120_000);

  it('runs two sub-agents of one response at once, each with its own log and progress; the results come back in call order', async () => {
    const sessionId = await api.createSession({ 'a.txt': 'from a\n', 'b.txt': 'from b\n' });
    let parentCalls = 0;
    const sub = (name: 'a' | 'b', body: MessagesRequest): ScriptedResponse => {
      if (body.messages.length > 1) return text(`Agent ${name} read its file.`);
      // Agent a's first answer streams slowly: b, started at the same time, finishes first.
      return {
        content: [{ type: 'tool_use', id: `toolu_read_${name}`, name: 'Read', input: { file_path: `/workspace/${name}.txt` } }],
        ...(name === 'a' ? { delayMs: 30 } : {}),
      };
    };
    routed.route = (body) => {
      const first = firstText(body);
      if (first === 'read both files') {
        return ++parentCalls === 1
          ? {
              content: [
                agentCall('toolu_a', { description: 'read a', prompt: 'SUB a: read a.txt', subagent_type: 'Explore' }),
                agentCall('toolu_b', { description: 'read b', prompt: 'SUB b: read b.txt', subagent_type: 'Explore' }),
              ],
            }
          : text('Both read.');
      }
      if (first === 'SUB a: read a.txt') return sub('a', body);
      if (first === 'SUB b: read b.txt') return sub('b', body);
      return undefined;
    };
    const before = stack.model!.requests.length;
    const res = await api.turn(sessionId, 'read both files');
    expect(res.json).toMatchObject({ stopReason: 'end_turn' });

    // Concurrent: each sub-agent's first request reached the model before the other's last one.
    // Run one after the other, all of a's requests would come before any of b's.
    const order = stack.model!.requests.slice(before).map((r) => `${firstText(r.body).slice(0, 5)}#${r.body.messages.length}`);
    expect(order.filter((o) => o.startsWith('SUB')).sort()).toEqual(['SUB a#1', 'SUB a#3', 'SUB b#1', 'SUB b#3']);
    expect(order.indexOf('SUB b#1')).toBeLessThan(order.indexOf('SUB a#3'));
    expect(order.indexOf('SUB a#1')).toBeLessThan(order.indexOf('SUB b#3'));

    // The parent's next request carries both results, in the order of the calls.
    const parentSecond = stack.model!.requests.slice(before).filter((r) => firstText(r.body) === 'read both files')[1]!;
    const results = parentSecond.body.messages.flatMap((m) =>
      typeof m.content === 'string' ? [] : m.content.filter((b) => b.type === 'tool_result'),
    ) as never as { tool_use_id: string; content: unknown }[];
    expect(results.map((r) => [r.tool_use_id, r.content])).toEqual([
      ['toolu_a', [{ type: 'text', text: 'Agent a read its file.' }]],
      ['toolu_b', [{ type: 'text', text: 'Agent b read its file.' }]],
    ]);
    const parentLog = await api.messages(sessionId);
    expect(parentLog.filter((m) => m.kind === 'tool_result').map((m: any) => m.content[0].tool_use_id)).toEqual(['toolu_a', 'toolu_b']);

    // Progress of each call is tagged with its own sub-agent, and each ran its whole course.
    for (const name of ['a', 'b']) {
      const progress = res.json.events.filter((e: any) => e.type === 'tool_progress' && e.toolUseId === `toolu_${name}`);
      expect(progress.map((e: any) => e.progress.type)).toEqual(['agent_start', 'assistant_message', 'tool_result', 'assistant_message', 'agent_end']);
      expect(new Set(progress.map((e: any) => e.progress.agentId))).toEqual(new Set([`agent_toolu_${name}`]));
      const log = await api.request('GET', `/v1/sessions/${sessionId}/agents/agent_toolu_${name}/messages`);
      expect(log.json.messages.map((m: any) => m.kind)).toEqual(['prompt', 'assistant', 'tool_result', 'assistant']);
      expect(log.json.messages[0].content[0].text).toBe(`SUB ${name}: read ${name}.txt`);
      expect(log.json.messages[2].content[0]).toMatchObject({ tool_use_id: `toolu_read_${name}`, content: `1\tfrom ${name}\n2\t` });
    }
    const agents = await api.request('GET', `/v1/sessions/${sessionId}/agents`);
    expect(agents.json.agents.map((a: any) => [a.agentId, a.status])).toEqual([
      ['agent_toolu_a', 'completed'],
      ['agent_toolu_b', 'completed'],
    ]);
  }, 120_000);

  it("forks with the parent's exact system prompt and tools bytes, and refuses a fork inside the fork", async () => {
    const sessionId = await api.createSession({ 'notes.txt': 'alpha\n' });
    let parentCalls = 0;
    routed.route = (body) => {
      // The fork's requests repeat the parent's messages: its directive is what tells them apart.
      if (userTexts(body).includes('Your directive: FORK: count the notes')) {
        return lastResults(body).some((r) => r.tool_use_id === 'toolu_nested')
          ? text('Scope: the notes.\nResult: one line.')
          : { content: [agentCall('toolu_nested', { description: 'fork again', prompt: 'FORK AGAIN' })] };
      }
      if (firstText(body) === 'fork yourself')
        return ++parentCalls === 1
          ? { content: [agentCall('toolu_fork', { description: 'count notes', prompt: 'FORK: count the notes' })] }
          : text('Parent done.');
      return undefined;
    };
    const before = stack.model!.requests.length;
    const res = await api.turn(sessionId, 'fork yourself');
    expect(res.json).toMatchObject({ stopReason: 'end_turn' });
    const requests = stack.model!.requests.slice(before);
    const parentFirst = requests.find((r) => firstText(r.body) === 'fork yourself' && !userTexts(r.body).includes('<fork-boilerplate>'))!;
    const forkRequests = requests.filter((r) => userTexts(r.body).includes('Your directive: FORK: count the notes'));
    expect(forkRequests).toHaveLength(2);

    // The fork's first request: the parent's system prompt and tools array, the same bytes, and
    // the parent's messages before its own start (only the moving cache breakpoint differs).
    const system = rawMember(parentFirst.raw, 'system');
    const tools = rawMember(parentFirst.raw, 'tools');
    // Whole values: the slices parse back to what the parent sent.
    expect(JSON.parse(system!)).toEqual(parentFirst.body.system);
    expect(JSON.parse(tools!)).toEqual(parentFirst.body.tools);
    expect(rawMember(forkRequests[0]!.raw, 'system')).toBe(system);
    expect(rawMember(forkRequests[0]!.raw, 'tools')).toBe(tools);
    expect(prefixProblem(parentFirst.raw, forkRequests[0]!.raw)).toBeUndefined();
    expect(forkRequests[0]!.body.tools!.map((t) => t.name)).toContain('Agent');

    // The fork tried to fork again: an error result with the reference's text, and no grandchild.
    const nested = lastResults(forkRequests[1]!.body);
    expect(nested).toHaveLength(1);
    expect(nested[0]).toMatchObject({ tool_use_id: 'toolu_nested', is_error: true });
    expect(JSON.stringify(nested[0]!.content)).toContain(FORK_IN_FORK_MESSAGE);
    expect(requests.some((r) => userTexts(r.body).includes('Your directive: FORK AGAIN'))).toBe(false);

    const agents = await api.request('GET', `/v1/sessions/${sessionId}/agents`);
    expect(agents.json.agents).toEqual([expect.objectContaining({ agentId: 'agent_toolu_fork', subagentType: 'fork', status: 'completed' })]);
    const result = res.json.events.find((e: any) => e.type === 'tool_result' && e.toolUseId === 'toolu_fork');
    expect(result.content[0]).toEqual({ type: 'text', text: 'Scope: the notes.\nResult: one line.' });
    expect(result.content[1].text).toMatch(
      /^agentId: agent_toolu_fork \(use SendMessage with to: 'agent_toolu_fork' to continue this agent\)\n<usage>total_tokens: \d+/,
    );
  }, 120_000);

  it("deletes the sub-agents' logs with their session, a sub-agent's own sub-agents too", async () => {
    const sessionId = await api.createSession();
    let parentCalls = 0;
    routed.route = (body) => {
      // A fork (its log repeats the parent's Agent call) that starts a Plan agent of its own.
      if (userTexts(body).includes('Your directive: FORK: delegate')) {
        return lastResults(body).some((r) => r.tool_use_id === 'toolu_grandchild')
          ? text('Scope: delegated.')
          : { content: [agentCall('toolu_grandchild', { description: 'plan', prompt: 'SUB: plan it', subagent_type: 'Plan' })] };
      }
      if (firstText(body) === 'delegate then go')
        return ++parentCalls === 1 ? { content: [agentCall('toolu_doomed', { description: 'delegate', prompt: 'FORK: delegate' })] } : text('Parent done.');
      if (firstText(body) === 'SUB: plan it') return text('The plan.');
      return undefined;
    };
    const other = await api.createSession();
    expect((await api.turn(sessionId, 'delegate then go')).json).toMatchObject({ stopReason: 'end_turn' });
    parentCalls = 0;
    expect((await api.turn(other, 'delegate then go')).json).toMatchObject({ stopReason: 'end_turn' });
    const logOf = async (id: string, agentId: string) => (await stack.deps.messages.loadFrom(`${id}/agents/${agentId}`)).map((m) => m.kind);
    const forkLog = ['prompt', 'synthetic', 'prompt', 'assistant', 'tool_result', 'assistant'];
    expect(await logOf(sessionId, 'agent_toolu_doomed')).toEqual(forkLog);
    expect(await logOf(sessionId, 'agent_toolu_grandchild')).toEqual(['prompt', 'assistant']);

    expect((await api.request('DELETE', `/v1/sessions/${sessionId}`)).status).toBe(202);
    for (let i = 0; i < 300 && (await stack.deps.sessions.get(sessionId)); i++) await new Promise((r) => setTimeout(r, 100));
    expect(await stack.deps.sessions.get(sessionId)).toBeUndefined();
    expect(await stack.deps.messages.loadFrom(sessionId)).toEqual([]);
    expect(await logOf(sessionId, 'agent_toolu_doomed')).toEqual([]);
    expect(await logOf(sessionId, 'agent_toolu_grandchild')).toEqual([]);
    // Another session's sub-agents, with the same tool_use ids, keep their logs.
    expect(await logOf(other, 'agent_toolu_doomed')).toEqual(forkLog);
    expect(await logOf(other, 'agent_toolu_grandchild')).toEqual(['prompt', 'assistant']);
  }, 120_000);
});
