import { beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../local/stack.ts';
import { agentCall, firstText, systemText } from '../support/agent-requests.ts';
import type { apiClient } from '../support/api-client.ts';
import { text, useRoutedLocalStack } from '../support/stack-fixture.ts';

const REVIEWER = {
  name: 'reviewer',
  description: 'Reviews a change for bugs; use it after editing code.',
  prompt: 'You are a careful code reviewer. Report bugs only.',
  tools: ['Read', 'Grep'],
};

describe('custom sub-agents from the session settings', () => {
  const { fx, routed } = useRoutedLocalStack();
  let stack: LocalStack;
  let api: ReturnType<typeof apiClient>;
  beforeAll(() => {
    ({ stack, api } = fx);
  });

  it("offers a session's custom agent in the Agent tool and runs it with its prompt and only its tools", async () => {
    const created = await api.request('POST', '/v1/sessions', { settings: { agents: [REVIEWER] } });
    expect(created.status).toBe(201);
    expect(created.json.agents).toEqual([REVIEWER]);
    const sessionId = created.json.id as string;
    let parentCalls = 0;
    routed.route = (body) => {
      if (firstText(body).startsWith('review it')) {
        return ++parentCalls === 1
          ? {
              content: [
                agentCall('toolu_review', { description: 'review change', prompt: 'SUB: review', subagent_type: 'reviewer' }),
                agentCall('toolu_nobody', { description: 'x', prompt: 'SUB: nobody', subagent_type: 'nobody' }),
              ],
            }
          : text('Reviewed.');
      }
      if (firstText(body) === 'SUB: review') return text('No bugs found.');
      return undefined;
    };
    const res = await api.turn(sessionId, 'review it');
    expect(res.json).toMatchObject({ stopReason: 'end_turn' });

    // The parent's Agent tool lists the custom agent with its tools, after the built-ins.
    const parentRequest = stack.model!.requests.find((r) => firstText(r.body).startsWith('review it'))!;
    const description = (parentRequest.body.tools!.find((t) => t.name === 'Agent') as { name: string; description?: string }).description!;
    expect(description).toContain('- reviewer: Reviews a change for bugs; use it after editing code. (Tools: Read, Grep)');
    expect(description.indexOf('- general-purpose:')).toBeLessThan(description.indexOf('- reviewer:'));

    // The sub-agent runs on the definition's prompt with only the tools it names.
    const sub = stack.model!.requests.find((r) => firstText(r.body) === 'SUB: review')!;
    expect(systemText(sub.body)).toContain('You are a careful code reviewer. Report bugs only.');
    expect(sub.body.tools!.map((t) => t.name)).toEqual(['Grep', 'Read']);
    const results = res.json.events.filter((e: any) => e.type === 'tool_result');
    expect(results.find((e: any) => e.toolUseId === 'toolu_review').content[0]).toEqual({ type: 'text', text: 'No bugs found.' });
    // An unknown type names every agent on offer, the custom one included.
    const unknown = results.find((e: any) => e.toolUseId === 'toolu_nobody');
    expect(unknown.isError).toBe(true);
    expect(JSON.stringify(unknown.content)).toContain("Agent type 'nobody' not found. Available agents: general-purpose, Explore, Plan, reviewer");
  }, 120_000);

  it('keeps the built-in Agent tool byte for byte when a session has no custom agents', async () => {
    const sessionId = await api.createSession();
    routed.route = (body) => (firstText(body) === 'plain' ? text('ok') : undefined);
    await api.turn(sessionId, 'plain');
    const request = stack.model!.requests.find((r) => firstText(r.body) === 'plain')!;
    const description = (request.body.tools!.find((t) => t.name === 'Agent') as { name: string; description?: string }).description!;
    expect(description).not.toContain('reviewer');
    expect(description).toContain('- Explore:');
  });

  it("changes a session's agents by PATCH, and refuses malformed definitions with 400", async () => {
    const sessionId = await api.createSession();
    const patched = await api.request('PATCH', `/v1/sessions/${sessionId}`, { settings: { agents: [{ ...REVIEWER, name: 'second-look' }] } });
    expect(patched.status).toBe(200);
    expect(patched.json.agents.map((a: { name: string }) => a.name)).toEqual(['second-look']);
    for (const agents of [[REVIEWER, REVIEWER], [{ ...REVIEWER, name: '1bad' }], [{ ...REVIEWER, prompt: '' }], [{ ...REVIEWER, extra: true }]]) {
      const res = await api.request('POST', '/v1/sessions', { settings: { agents } });
      expect(res.status).toBe(400);
      expect(res.json.error.message).toMatch(/agents/);
    }
  });
});
