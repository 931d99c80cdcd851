import { AGENT_TOOL_NAMES, agentIdFor, agentLogId } from '../stores/agent-log.ts';
import type { StoredMessage } from '../stores/message-store.ts';
import type { SessionRecord } from '../stores/session-store.ts';
import { ToolError, type AgentMessageOutcome, type AgentMessenger, type ToolContext } from '../tools/tool.ts';
import { danglingToolUses, syntheticResults } from '../context/transcript.ts';
import { sessionAgents } from './agent-driver.ts';
import { openChildLog } from './subagent-runner.ts';
import type { TurnDeps } from './turn-deps.ts';

/** Sub-agent ids are derived from tool_use ids (functions/stores/agent-log.ts): nothing else can name one. */
const AGENT_ID = /^agent_[A-Za-z0-9_-]{1,200}$/;

export interface MessengerScope {
  deps: TurnDeps;
  session: SessionRecord;
  turnId: string;
  /** A continued agent runs in the background: the turn watches for its notification, as for a launch. */
  onBackgroundLaunch?: (agentLogId: string) => void;
}

/**
 * SendMessage's engine side: continue one of the session's sub-agents by id, from its own log.
 * Only agents the session's log names are reachable (the log id is built in the session's own
 * partition), so another session's or tenant's agent is never found. A running background agent
 * gets the message queued for its next model call; a stopped one (a finished foreground agent,
 * a finished or failed background one) gets it as a new prompt in its log and runs again as a
 * background agent in its own invocation, statelessly, from the log as stored.
 */
export function createAgentMessenger(scope: MessengerScope): AgentMessenger {
  return { send: (to, message, ctx) => sendToAgent(scope, to, message, ctx) };
}

async function sendToAgent(scope: MessengerScope, to: string, message: string, ctx: ToolContext): Promise<AgentMessageOutcome> {
  const { deps, session } = scope;
  const agent = AGENT_ID.test(to) ? launchIn(await deps.messages.loadFrom(session.sessionId), to) : undefined;
  if (!agent) throw new ToolError(unknownAgentMessage(to));
  const logId = agentLogId(session.sessionId, agent.agentId);
  let record = await deps.backgroundAgents.get(logId);
  if (record?.status === 'running') {
    if (await deps.backgroundAgents.queueMessage(logId, message))
      return { success: true, message: `Message queued for delivery to ${to} at its next tool round.` };
    // It finished between the two reads: continued as a stopped one.
    record = await deps.backgroundAgents.get(logId);
  }
  if (!record && agent.status === 'running')
    return { success: false, message: `Agent "${to}" is running in the foreground of this turn; its result comes back to the Agent call that started it.` };
  const refusal = cannotResume(session, agent);
  if (refusal) return { success: false, message: `Agent "${to}" is stopped (${agent.status}) and could not be resumed: ${refusal}` };
  const childLog = await openChildLog({ deps, turnId: ctx.turnId }, logId);
  const conversation = childLog.loaded.conversation;
  if (conversation.length === 0)
    return {
      success: false,
      message: `Agent "${to}" is registered but has no transcript to resume. It may have been cleaned up. (No transcript found for agent ID: ${to})`,
    };
  const dangling = danglingToolUses(conversation);
  if (dangling.length > 0) await childLog.append('synthetic', 'user', syntheticResults(dangling));
  await childLog.append('prompt', 'user', [{ type: 'text', text: message }]);
  await rearm(scope, agent, logId, record !== undefined);
  return record
    ? {
        success: true,
        message: `Agent "${to}" was stopped (${record.status}); resumed it in the background with your message. You'll be notified when it finishes.`,
      }
    : {
        success: true,
        message: `Agent "${to}" had no active task; resumed from transcript in the background with your message. You'll be notified when it finishes.`,
      };
}

/** A fork repeats its parent's request, which another invocation cannot rebuild; a type the session no longer has cannot run. */
function cannotResume(session: SessionRecord, agent: SessionAgent): string | undefined {
  if (agent.subagentType === 'fork')
    return 'a fork repeats its parent request, which Stratus cannot rebuild in another invocation; start a new Agent call with a subagent_type.';
  if (!sessionAgents(session.settings).some((a) => a.agentType === agent.subagentType))
    return `Agent type '${agent.subagentType}' is no longer available in this session.`;
  return undefined;
}

/** Running again in its own invocation: its record made (a foreground agent's first time) or reopened, its invocation asked for. */
async function rearm(scope: MessengerScope, agent: SessionAgent, logId: string, hasRecord: boolean): Promise<void> {
  const { deps, session } = scope;
  const now = deps.clock();
  const fresh = {
    startedAt: now,
    modelCalls: 0,
    usage: { inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0, costUsd: 0 },
    toolUses: 0,
  };
  if (hasRecord) await deps.backgroundAgents.reopen(logId, fresh);
  else
    await deps.backgroundAgents.create({
      sessionId: logId,
      parentSessionId: session.sessionId,
      agentId: agent.agentId,
      toolUseId: agent.toolUseId,
      agentType: agent.subagentType,
      description: agent.description,
      status: 'running',
      createdAt: new Date(now).toISOString(),
      updatedAt: new Date(now).toISOString(),
      ...fresh,
    });
  await deps.continuations.schedule({ kind: 'run_subagent', sessionId: session.sessionId, agentLogId: logId });
  scope.onBackgroundLaunch?.(logId);
}

/** What the session's log says of one of its sub-agents: its Agent call, and whether that call has its result yet. */
interface SessionAgent {
  agentId: string;
  toolUseId: string;
  /** `fork` when the call named no type. */
  subagentType: string;
  description: string;
  status: 'running' | 'completed' | 'failed';
}

function launchIn(log: readonly StoredMessage[], agentId: string): SessionAgent | undefined {
  let found: SessionAgent | undefined;
  for (const message of log) {
    for (const block of message.content) {
      if (block.type === 'tool_use' && AGENT_TOOL_NAMES.has(block.name) && agentIdFor(block.id) === agentId) {
        const input = (block.input ?? {}) as { subagent_type?: unknown; description?: unknown };
        const subagentType = typeof input.subagent_type === 'string' ? input.subagent_type : 'fork';
        found = { agentId, toolUseId: block.id, subagentType, description: typeof input.description === 'string' ? input.description : '', status: 'running' };
      } else if (block.type === 'tool_result' && found && block.tool_use_id === found.toolUseId) {
        found.status = block.is_error === true ? 'failed' : 'completed';
      }
    }
  }
  return found;
}

export function unknownAgentMessage(to: string): string {
  return `No agent with id '${to}' in this session. SendMessage continues a sub-agent of this session by the agentId its Agent call returned.`;
}
