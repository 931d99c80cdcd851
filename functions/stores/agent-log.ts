import type { StoredMessage } from './message-store.ts';

/** The tool names an Agent call is stored under (`Task`, the tool's older name, is an alias). */
export const AGENT_TOOL_NAMES: ReadonlySet<string> = new Set(['Agent', 'Task']);

/**
 * A sub-agent's message log lives in the messages table under its own partition, next to its
 * session's: `{sessionId}/agents/{agentId}`. The agent id is derived from the parent's tool_use
 * id, so the logs alone say which sub-agents exist and where their logs are (the session's
 * names its own; a sub-agent's log names any it started).
 */
export function agentLogId(sessionId: string, agentId: string): string {
  return `${sessionId}/agents/${agentId}`;
}

/** The sub-agent id of an Agent tool_use (stable across reloads and instances). */
export function agentIdFor(toolUseId: string): string {
  return `agent_${toolUseId}`;
}

/**
 * The sub-agent logs a log names: one per Agent tool_use in it. Every log of a session sits
 * directly under the session (a sub-agent's own sub-agents too), so the partition is the
 * session's whatever log the call was in.
 */
export function agentLogIdsIn(sessionId: string, log: readonly StoredMessage[]): string[] {
  const ids: string[] = [];
  for (const message of log) {
    for (const block of message.content) {
      if (block.type === 'tool_use' && AGENT_TOOL_NAMES.has(block.name)) ids.push(agentLogId(sessionId, agentIdFor(block.id)));
    }
  }
  return ids;
}
