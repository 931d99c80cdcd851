import { describe, expect, it } from 'vitest';
import { unreportedBackgroundAgents } from '../../../functions/agent/background-notifications.ts';

const use = (id: string, name: string, input: Record<string, unknown>) => ({
  role: 'assistant' as const,
  content: [{ type: 'tool_use' as const, id, name, input }],
});
const notified = (agentId: string) => ({
  role: 'user' as const,
  content: [{ type: 'text' as const, text: `<task-notification>\n<task-id>${agentId}</task-id>\n<status>completed</status>\n</task-notification>` }],
});

describe('which background agents a log has not heard back from', () => {
  it('counts a SendMessage call as a new launch of its agent, reported by the notification after it', () => {
    const launched = use('toolu_bg', 'Agent', { description: 'd', prompt: 'p', subagent_type: 'general-purpose', run_in_background: true });
    const foreground = use('toolu_fg', 'Agent', { description: 'd', prompt: 'p', subagent_type: 'general-purpose' });
    const log = [launched, foreground, notified('agent_toolu_bg')];
    expect(unreportedBackgroundAgents('ses_1', log)).toEqual([]);
    const continued = [
      ...log,
      use('toolu_s1', 'SendMessage', { to: 'agent_toolu_bg', message: 'm' }),
      use('toolu_s2', 'SendMessage', { to: 'agent_toolu_fg', message: 'm' }),
    ];
    expect(unreportedBackgroundAgents('ses_1', continued)).toEqual(['ses_1/agents/agent_toolu_bg', 'ses_1/agents/agent_toolu_fg']);
    expect(unreportedBackgroundAgents('ses_1', [...continued, notified('agent_toolu_fg')])).toEqual(['ses_1/agents/agent_toolu_bg']);
    // A recipient that cannot be an agent id is no launch.
    expect(unreportedBackgroundAgents('ses_1', [use('toolu_s3', 'SendMessage', { to: '../other', message: 'm' })])).toEqual([]);
  });
});
