/**
 * A running sub-agent reports through its Agent call's `tool_progress` events, each tagged with
 * `{agentId, agentType}`: as one readable line per step, appended to what the call shows so far.
 */
type AgentProgress = { agentId: string; agentType?: string; type?: string; [key: string]: unknown };

export const isAgentProgress = (p: unknown): p is AgentProgress => typeof (p as AgentProgress | null)?.agentId === 'string';

export function agentProgressLine(p: AgentProgress): string {
  const who = `[${p.agentType ?? 'agent'}]`;
  switch (p.type) {
    case 'agent_start':
      return `${who} started: ${String(p.description ?? '')}`;
    case 'assistant_message': {
      const blocks = (Array.isArray(p.content) ? p.content : []) as { type: string; text?: string; name?: string }[];
      const parts = blocks.map((b) => (b.type === 'text' ? (b.text ?? '').slice(0, 200) : b.type === 'tool_use' ? `→ ${b.name}` : `[${b.type}]`));
      return `${who} ${parts.join(' ')}`;
    }
    case 'tool_result':
      return `${who} ${String(p.toolName ?? 'tool')} ${p.isError ? 'failed' : 'done'}`;
    case 'agent_end':
      return `${who} ended: ${String(p.stopReason ?? '')}`;
    default:
      return `${who} ${String(p.type ?? 'progress')}`;
  }
}
