/**
 * A sub-agent's message log lives in the messages table under its own partition, next to its
 * session's: `{sessionId}/agents/{agentId}`. The agent id is derived from the parent's tool_use
 * id, so the parent's log alone says which sub-agents exist and where their logs are.
 */
export function agentLogId(sessionId: string, agentId: string): string {
  return `${sessionId}/agents/${agentId}`;
}

/** The sub-agent id of an Agent tool_use (stable across reloads and instances). */
export function agentIdFor(toolUseId: string): string {
  return `agent_${toolUseId}`;
}
