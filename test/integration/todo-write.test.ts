import { describe, expect, it } from 'vitest';
import { startLocalStack } from '../../local/stack.ts';
import { TODOS_UPDATED_TEXT } from '../../functions/tools/todo-write-tool.ts';
import { agentCall, firstText } from '../support/agent-requests.ts';
import { apiClient } from '../support/api-client.ts';
import { text, useRoutedLocalStack } from '../support/stack-fixture.ts';
import { makeTempDir } from '../support/temp-dir.ts';

const todoWrite = (id: string, todos: unknown) => ({ type: 'tool_use' as const, id, name: 'TodoWrite', input: { todos } });
const plan = [
  { content: 'Read the code', status: 'completed', activeForm: 'Reading the code' },
  { content: 'Fix the bug', status: 'in_progress', activeForm: 'Fixing the bug' },
  { content: 'Run the tests', status: 'pending', activeForm: 'Running the tests' },
];

/** TodoWrite through the API, the turn engine and the session record (docs/tools.md, "TodoWrite"). */
describe('the TodoWrite task list', () => {
  const { fx, routed } = useRoutedLocalStack();

  it("keeps the main agent's list in the session, streams each write, and leaves it unchanged on a refused input", async () => {
    const { api } = fx;
    const sessionId = await api.createSession();
    expect((await api.request('GET', `/v1/sessions/${sessionId}`)).json.todos).toEqual([]);
    let calls = 0;
    routed.route = () =>
      [
        {
          content: [
            todoWrite(
              'toolu_t1',
              plan.map((t) => ({ ...t, status: 'pending' })),
            ),
          ],
        },
        { content: [todoWrite('toolu_t2', plan)] },
        { content: [todoWrite('toolu_bad', [{ content: 'x', status: 'started', activeForm: 'x' }])] },
        text('Working on it.'),
      ][calls++];
    const { status, events } = await api.turnSse(sessionId, 'fix it');
    expect(status).toBe(200);
    const writes = events.filter((e) => e.type === 'todos');
    expect(writes.map((e) => (e as { todos: { status: string }[] }).todos.map((t) => t.status))).toEqual([
      ['pending', 'pending', 'pending'],
      ['completed', 'in_progress', 'pending'],
    ]);
    const results = events.filter((e) => e.type === 'tool_result') as { toolUseId: string; isError: boolean; content: unknown }[];
    expect(results.map((r) => [r.toolUseId, r.isError])).toEqual([
      ['toolu_t1', false],
      ['toolu_t2', false],
      ['toolu_bad', true],
    ]);
    expect(JSON.stringify(results[0]!.content)).toContain(TODOS_UPDATED_TEXT);
    expect((await api.request('GET', `/v1/sessions/${sessionId}`)).json.todos).toEqual(plan);
  });

  it("gives a sub-agent its own list: its writes never touch the session's", async () => {
    const { api } = fx;
    const sessionId = await api.createSession();
    let parent = 0;
    routed.route = (body) => {
      if (firstText(body) === 'SUB: plan') {
        return body.messages.length === 1
          ? { content: [todoWrite('toolu_sub', [{ content: 'Sub step', status: 'in_progress', activeForm: 'Doing the sub step' }])] }
          : text('Sub done.');
      }
      return [
        { content: [todoWrite('toolu_main', plan)] },
        { content: [agentCall('toolu_agent', { description: 'plan', prompt: 'SUB: plan', subagent_type: 'general-purpose' })] },
        text('Done.'),
      ][parent++];
    };
    const { events } = await api.turnSse(sessionId, 'delegate');
    const subResult = (events.filter((e) => e.type === 'tool_result') as { toolUseId: string; isError: boolean }[]).find((r) => r.toolUseId === 'toolu_agent');
    expect(subResult?.isError).toBe(false);
    // The sub-agent's write succeeded (in its own list), and was not streamed as the session's.
    const subFollowUp = fx.stack.model!.requests.find((r) => firstText(r.body) === 'SUB: plan' && r.body.messages.length > 1)!;
    expect(JSON.stringify(subFollowUp.body.messages.at(-1))).toContain(TODOS_UPDATED_TEXT);
    expect(JSON.stringify(subFollowUp.body.messages.at(-1))).not.toContain('"is_error":true');
    expect(events.filter((e) => e.type === 'todos')).toHaveLength(1);
    expect((await api.request('GET', `/v1/sessions/${sessionId}`)).json.todos).toEqual(plan);
  });
});

describe('a task list after a restart', () => {
  it('is read back from the session record by a new process on the same data', async () => {
    const tmp = makeTempDir();
    try {
      const first = await startLocalStack({ dataDir: tmp.dir, writeMetrics: () => undefined });
      const api = apiClient(first.apiUrl, first.token);
      const sessionId = await api.createSession();
      first.model!.enqueue({ content: [todoWrite('toolu_t', plan)] }, text('Planned.'));
      expect((await api.turn(sessionId, 'plan it')).status).toBe(200);
      await first.stop();
      const second = await startLocalStack({ dataDir: tmp.dir, writeMetrics: () => undefined });
      try {
        const again = apiClient(second.apiUrl, second.token);
        expect((await again.request('GET', `/v1/sessions/${sessionId}`)).json.todos).toEqual(plan);
      } finally {
        await second.stop();
      }
    } finally {
      tmp.cleanup();
    }
  }, 120_000);
});
