import { beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../local/stack.ts';
import type { MessagesRequest, ScriptedResponse } from '../../local/scripted-model/script.ts';
import { apiClient } from '../support/api-client.ts';
import { withoutCacheControl } from '../support/request-bodies.ts';
import { text, unscripted, useLocalStack } from '../support/stack-fixture.ts';

type Route = (body: MessagesRequest) => ScriptedResponse | undefined;

/** The first user text of a request: which agent (the parent's prompt, or a sub-agent's) asked. */
function firstText(body: MessagesRequest): string {
  const first = body.messages[0]!;
  if (typeof first.content === 'string') return first.content;
  return first.content.filter((b) => b.type === 'text').map((b) => String(b.text)).join('');
}

function systemText(body: MessagesRequest): string {
  return Array.isArray(body.system) ? body.system.map((b: { text: string }) => b.text).join('') : String(body.system);
}

const agentCall = (id: string, input: Record<string, unknown>) => ({ type: 'tool_use' as const, id, name: 'Agent', input });

describe('sub-agents (the Agent tool) on the local stack', () => {
  let route: Route = () => undefined;
  const fx = useLocalStack({ brain: (body) => route(body) ?? unscripted() });
  let stack: LocalStack;
  let api: ReturnType<typeof apiClient>;
  beforeAll(() => {
    ({ stack, api } = fx);
  });

  it('runs an Explore sub-agent with its own log and tools; its final text is the parent\'s tool_result', async () => {
    const sessionId = await api.createSession({ 'notes.txt': 'alpha\n' });
    let parentCalls = 0;
    route = (body) => {
      if (firstText(body).startsWith('find the notes')) {
        return ++parentCalls === 1 ? { content: [agentCall('toolu_explore', { description: 'find notes', prompt: 'SUB: read notes', subagent_type: 'Explore' })] } : text('Parent done.');
      }
      if (firstText(body) === 'SUB: read notes') {
        const seenResult = body.messages.length > 1;
        return seenResult ? text('The notes say alpha.') : { content: [{ type: 'tool_use', id: 'toolu_sub_read', name: 'Read', input: { file_path: '/workspace/notes.txt' } }] };
      }
      return undefined;
    };
    const res = await api.turn(sessionId, 'find the notes');
    expect(res.json).toMatchObject({ stopReason: 'end_turn' });
    const subRequest = stack.model!.requests.find((r) => firstText(r.body) === 'SUB: read notes')!;
    // Explore's tools: read-only ones, no Agent, Write, Edit, TaskOutput or TaskStop.
    expect(subRequest.body.tools!.map((t) => t.name)).toEqual(['Bash', 'Glob', 'Grep', 'Read']);
    expect(systemText(subRequest.body)).toContain('You are a file search specialist for Claude Code');
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
      expect.objectContaining({ agentId: 'agent_toolu_explore', toolUseId: 'toolu_explore', subagentType: 'Explore', description: 'find notes', status: 'completed' }),
    ]);
    const log = await api.request('GET', `/v1/sessions/${sessionId}/agents/agent_toolu_explore/messages`);
    expect(log.json.messages.map((m: any) => [m.seq, m.kind])).toEqual([[0, 'prompt'], [1, 'assistant'], [2, 'tool_result'], [3, 'assistant']]);
    expect(log.json.messages[2].content[0]).toMatchObject({ tool_use_id: 'toolu_sub_read', content: '1\talpha\n2\t' });
    const parentLog = await api.messages(sessionId);
    expect(parentLog.map((m) => m.kind)).toEqual(['prompt', 'assistant', 'tool_result', 'assistant']);
    const session = await api.request('GET', `/v1/sessions/${sessionId}`);
    expect(session.json.budgets.maxModelCallsPerTurn.spent).toBe(0);
    expect(session.json.lastTurn.usage.inputTokens).toBeGreaterThan(0);
    const assistantUsage = [...parentLog, ...log.json.messages].filter((m: any) => m.kind === 'assistant').reduce((n: number, m: any) => n + m.usage.inputTokens, 0);
    expect(session.json.usage.inputTokens).toBe(assistantUsage);
  }, 120_000);
});
