import { beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../local/stack.ts';
import type { MessagesRequest } from '../../local/scripted-model/script.ts';
import type { apiClient } from '../support/api-client.ts';
import { agentLogId } from '../../functions/stores/agent-log.ts';
import { NO_TEAMS_MESSAGE } from '../../functions/tools/agent/send-message-tool.ts';
import { unknownAgentMessage } from '../../functions/agent/subagent-continue.ts';
import { agentCall, firstText } from '../support/agent-requests.ts';
import { text, useRoutedLocalStack } from '../support/stack-fixture.ts';

const send = (id: string, to: string, message: unknown, summary: string | null = 'a follow-up') => ({
  type: 'tool_use' as const,
  id,
  name: 'SendMessage',
  input: { to, message, ...(summary !== null ? { summary } : {}) },
});

/** Every text of a request's messages, in order (what the model was shown of the conversation). */
function allTexts(body: MessagesRequest): string[] {
  return body.messages.flatMap((m) => (typeof m.content === 'string' ? [m.content] : m.content.filter((b) => b.type === 'text').map((b) => String(b.text))));
}

/** The tool_result text the parent got for a call, from the session's log. */
async function resultOf(api: ReturnType<typeof apiClient>, sessionId: string, toolUseId: string): Promise<{ text: string; isError: boolean }> {
  for (const m of await api.messages(sessionId))
    for (const b of m.content)
      if (b.type === 'tool_result' && b.tool_use_id === toolUseId)
        return { text: typeof b.content === 'string' ? b.content : b.content.map((c: { text: string }) => c.text).join('\n'), isError: b.is_error === true };
  throw new Error(`no result for ${toolUseId}`);
}

/** SendMessage: continue a sub-agent by id from its stored log (docs/tools.md, "SendMessage"). */
describe('SendMessage on the local stack', () => {
  const { fx, routed } = useRoutedLocalStack();
  let stack: LocalStack;
  let api: ReturnType<typeof apiClient>;
  beforeAll(() => {
    ({ stack, api } = fx);
  });

  async function untilFinished(sessionId: string, agentId: string, notBefore = 0) {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const record = await stack.deps.backgroundAgents.get(agentLogId(sessionId, agentId));
      if (record && record.status !== 'running' && record.startedAt >= notBefore) return record;
      if (Date.now() > deadline) throw new Error(`agent ${agentId} never finished: ${JSON.stringify(record)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  it('continues a finished foreground agent in the background with its transcript reloaded, and reports it at the next turn', async () => {
    const sessionId = await api.createSession({ 'a.txt': 'a', 'b.txt': 'b' });
    let parent = 0;
    routed.route = (body) => {
      if (firstText(body) === 'delegate the count') {
        parent += 1;
        if (parent === 1)
          return { content: [agentCall('toolu_fg', { description: 'count files', prompt: 'SUB-FG: count', subagent_type: 'general-purpose' })] };
        if (parent === 2) return text('It counted.');
        if (parent === 3) return { content: [send('toolu_sm1', 'agent_toolu_fg', 'SUB-MORE: which ones?')] };
        return text(parent === 4 ? 'Asked it.' : 'It named them.');
      }
      if (firstText(body) === 'SUB-FG: count') return text(allTexts(body).includes('SUB-MORE: which ones?') ? 'a.txt and b.txt' : 'Two files.');
      return undefined;
    };
    await api.turn(sessionId, 'delegate the count');
    const agentResult = await resultOf(api, sessionId, 'toolu_fg');
    expect(agentResult.text).toMatch(
      /^Two files\.\nagentId: agent_toolu_fg \(use SendMessage with to: 'agent_toolu_fg' to continue this agent\)\n<usage>total_tokens: \d+/,
    );

    await api.turn(sessionId, 'ask it which');
    expect(await resultOf(api, sessionId, 'toolu_sm1')).toEqual({
      text: JSON.stringify({
        success: true,
        message: `Agent "agent_toolu_fg" had no active task; resumed from transcript in the background with your message. You'll be notified when it finishes.`,
      }),
      isError: false,
    });
    const record = await untilFinished(sessionId, 'agent_toolu_fg');
    const listed = await api.request('GET', `/v1/sessions/${sessionId}/agents`);
    expect(listed.json.agents).toEqual([expect.objectContaining({ agentId: 'agent_toolu_fg', status: 'completed', background: false })]);
    expect(record).toMatchObject({
      status: 'completed',
      agentType: 'general-purpose',
      toolUseId: 'toolu_fg',
      result: { content: [{ type: 'text', text: 'a.txt and b.txt' }] },
    });
    // The continued request holds the whole first run, then the message.
    const resumed = stack.model!.requests.map((r) => r.body).find((b) => firstText(b) === 'SUB-FG: count' && allTexts(b).includes('SUB-MORE: which ones?'))!;
    expect(allTexts(resumed).slice(-3)).toEqual(['SUB-FG: count', 'Two files.', 'SUB-MORE: which ones?'].slice(-3));
    const log = await api.request('GET', `/v1/sessions/${sessionId}/agents/agent_toolu_fg/messages`);
    expect(log.json.messages.map((m: { kind: string }) => m.kind)).toEqual(['prompt', 'assistant', 'prompt', 'assistant']);

    await api.turn(sessionId, 'what did it say?');
    const last = stack
      .model!.requests.map((r) => r.body)
      .filter((b) => firstText(b) === 'delegate the count')
      .at(-1)!;
    const notification = allTexts(last).find((t) => t.startsWith('<task-notification>'))!;
    expect(notification).toContain('<task-id>agent_toolu_fg</task-id>');
    expect(notification).toContain('<result>a.txt and b.txt</result>');
  });

  it('queues a message for a running background agent, which gets it at its next tool round; a finished one is resumed', async () => {
    const sessionId = await api.createSession({ 'notes.txt': 'alpha\n' });
    let parent = 0;
    routed.route = (body) => {
      if (firstText(body) === 'watch the notes') {
        parent += 1;
        if (parent === 1)
          return {
            content: [agentCall('toolu_bgq', { description: 'read notes', prompt: 'SUB-Q: read', subagent_type: 'general-purpose', run_in_background: true })],
          };
        // Late enough that the agent's invocation is in its first (slow) model call.
        if (parent === 2) return { content: [send('toolu_q1', 'agent_toolu_bgq', 'SUB-Q-EXTRA: say beta too')], delayMs: 700 };
        return text('ok');
      }
      if (firstText(body).startsWith('SUB-Q: read')) {
        const texts = allTexts(body);
        if (texts.includes('SUB-Q-AGAIN: once more')) return text('again: alpha');
        if (!texts.includes('SUB-Q-EXTRA: say beta too'))
          return { content: [{ type: 'tool_use', id: 'toolu_q_read', name: 'Read', input: { file_path: '/workspace/notes.txt' } }], delayMs: 2_000 };
        // At its next tool round: after the Read's result, in the same user message.
        const last = body.messages.at(-1)!.content as { type: string; text?: string }[];
        expect(last.map((b) => b.type)).toEqual(['tool_result', 'text']);
        expect(last[1]!.text).toBe('SUB-Q-EXTRA: say beta too');
        return text('alpha and beta');
      }
      return undefined;
    };
    await api.turn(sessionId, 'watch the notes');
    expect(await resultOf(api, sessionId, 'toolu_q1')).toEqual({
      text: JSON.stringify({ success: true, message: 'Message queued for delivery to agent_toolu_bgq at its next tool round.' }),
      isError: false,
    });
    const first = await untilFinished(sessionId, 'agent_toolu_bgq');
    expect(first.result?.content).toEqual([{ type: 'text', text: 'alpha and beta' }]);
    expect(first.pendingMessages ?? []).toEqual([]);

    // Finished now: the next message resumes it (its record reopened, its spend counted afresh).
    parent = 0;
    routed.route = (body) => {
      if (firstText(body) === 'watch the notes')
        return ++parent === 1 ? { content: [send('toolu_q2', 'agent_toolu_bgq', 'SUB-Q-AGAIN: once more')] } : text('ok');
      if (firstText(body) === 'SUB-Q: read') return text('again: alpha');
      return undefined;
    };
    const before = Date.now();
    await api.turn(sessionId, 'once more');
    expect(JSON.parse((await resultOf(api, sessionId, 'toolu_q2')).text)).toEqual({
      success: true,
      message: `Agent "agent_toolu_bgq" was stopped (completed); resumed it in the background with your message. You'll be notified when it finishes.`,
    });
    const second = await untilFinished(sessionId, 'agent_toolu_bgq', before);
    expect(second).toMatchObject({ status: 'completed', modelCalls: 1, result: { content: [{ type: 'text', text: 'again: alpha' }] } });
    expect(second.notified).not.toBe(true);
  });

  it("refuses what it cannot continue: unknown ids, another session's agent, forks, structured messages, a missing summary", async () => {
    const other = await api.createSession();
    routed.route = (body) => {
      if (firstText(body) === 'other session')
        return body.messages.length === 1
          ? { content: [agentCall('toolu_other', { description: 'x', prompt: 'SUB-OTHER', subagent_type: 'general-purpose' })] }
          : text('ok');
      if (firstText(body) === 'SUB-OTHER') return text('other result');
      return undefined;
    };
    await api.turn(other, 'other session');
    const sessionId = await api.createSession();
    let calls = 0;
    routed.route = (body) => {
      // The fork: its directive closes its first request's last message (the parent's requests carry it only in the Agent call's input).
      const closing = body.messages.at(-1)!.content;
      if (Array.isArray(closing) && closing.some((b) => b.type === 'text' && String(b.text).includes('SUB-FORK: go'))) return text('forked result');
      if (firstText(body) === 'try them') {
        return [
          { content: [agentCall('toolu_fork', { description: 'fork it', prompt: 'SUB-FORK: go' })] },
          {
            content: [
              send('toolu_e1', 'agent_nope', 'hi'),
              send('toolu_e2', 'agent_toolu_other', 'hi'),
              send('toolu_e3', 'agent_toolu_fork', 'hi'),
              send('toolu_e4', 'agent_toolu_fork', { type: 'shutdown_request' }),
              send('toolu_e5', 'agent_toolu_fork', 'hi', null),
              send('toolu_e6', 'someone@team', 'hi'),
            ],
          },
          text('done'),
        ][calls++];
      }
      return undefined;
    };
    await api.turn(sessionId, 'try them');
    expect(await resultOf(api, sessionId, 'toolu_e1')).toEqual({ text: unknownAgentMessage('agent_nope'), isError: true });
    expect(await resultOf(api, sessionId, 'toolu_e2')).toEqual({ text: unknownAgentMessage('agent_toolu_other'), isError: true });
    const fork = JSON.parse((await resultOf(api, sessionId, 'toolu_e3')).text);
    expect(fork.success).toBe(false);
    expect(fork.message).toMatch(/^Agent "agent_toolu_fork" is stopped \(completed\) and could not be resumed: a fork /);
    expect(await resultOf(api, sessionId, 'toolu_e4')).toEqual({ text: `<tool_use_error>${NO_TEAMS_MESSAGE}</tool_use_error>`, isError: true });
    expect(await resultOf(api, sessionId, 'toolu_e5')).toEqual({
      text: '<tool_use_error>summary is required when message is a string</tool_use_error>',
      isError: true,
    });
    expect((await resultOf(api, sessionId, 'toolu_e6')).text).toBe(
      '<tool_use_error>to must be a bare teammate name or "*" — there is only one team per session</tool_use_error>',
    );
    expect(await stack.deps.backgroundAgents.get(agentLogId(other, 'agent_toolu_other'))).toBeUndefined();
  });
});
