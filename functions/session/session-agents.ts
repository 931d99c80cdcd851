import { NotFoundError } from '../shared/errors.ts';
import { AGENT_TOOL_NAMES, agentIdFor, agentLogId } from '../stores/agent-log.ts';
import type { MessageStore } from '../stores/message-store.ts';
import type { BackgroundAgentStore } from '../stores/background-agent-store.ts';

/** One sub-agent as `GET /v1/sessions/{id}/agents` shows it. */
export interface SessionAgent {
  agentId: string;
  toolUseId: string;
  /** The agent type asked for; `fork` when none was (a fork of the parent). */
  subagentType: string;
  description: string;
  /** `running` until the parent's log holds the call's result (a crashed one stays so until the next turn repairs it), or while a SendMessage continues it. */
  status: 'running' | 'completed' | 'failed';
  /** Launched with `run_in_background`: its status is its own record's (the parent's result only says it started). */
  background: boolean;
  turnId: string;
  createdAt: string;
}

/**
 * The session's sub-agents, read from its own log: every Agent tool_use is one, its id derived
 * from the tool_use id, its status from the matching tool_result. Nothing else has to be kept
 * in step with the log, so a crash can never leave the listing and the logs disagreeing.
 */
type AgentListDeps = { messages: Pick<MessageStore, 'loadFrom'>; backgroundAgents: Pick<BackgroundAgentStore, 'get'> };

export async function listSessionAgents(deps: AgentListDeps, sessionId: string): Promise<SessionAgent[]> {
  const log = await deps.messages.loadFrom(sessionId);
  const agents = new Map<string, SessionAgent>();
  for (const message of log) {
    for (const block of message.content) {
      if (block.type === 'tool_use' && AGENT_TOOL_NAMES.has(block.name)) {
        const input = (block.input ?? {}) as { subagent_type?: unknown; description?: unknown; run_in_background?: unknown };
        agents.set(block.id, {
          agentId: agentIdFor(block.id),
          toolUseId: block.id,
          subagentType: typeof input.subagent_type === 'string' ? input.subagent_type : 'fork',
          description: typeof input.description === 'string' ? input.description : '',
          status: 'running',
          background: input.run_in_background === true,
          turnId: message.turnId,
          createdAt: message.createdAt,
        });
      } else if (block.type === 'tool_result' && agents.has(block.tool_use_id)) {
        agents.get(block.tool_use_id)!.status = block.is_error === true ? 'failed' : 'completed';
      }
    }
  }
  for (const agent of agents.values()) {
    // A background agent's record is its status; a foreground one has a record once SendMessage continued it.
    // No record: a foreground agent never continued, or a launch that failed before it was made (its tool_result says so).
    const record = agent.background || agent.status !== 'running' ? await deps.backgroundAgents.get(agentLogId(sessionId, agent.agentId)) : undefined;
    if (record) agent.status = record.status;
  }
  return [...agents.values()];
}

/** The agent, or a 404 naming it. */
export async function getSessionAgent(deps: AgentListDeps, sessionId: string, agentId: string): Promise<SessionAgent> {
  const agent = (await listSessionAgents(deps, sessionId)).find((a) => a.agentId === agentId);
  if (!agent) throw new NotFoundError(`Session ${sessionId} has no sub-agent ${agentId}.`);
  return agent;
}
