import { createContextManager, type ContextManager } from '../context/context-manager.ts';
import { createPersistedResultReader } from '../context/persisted-output.ts';
import { loadSessionContext } from '../context/session-context.ts';
import { danglingToolUses, syntheticResults, toApiMessages } from '../context/transcript.ts';
import { hooksFor, permissionContextFor } from '../permissions/session-settings.ts';
import type { StoredMessage } from '../stores/message-store.ts';
import { activeAgents, customAgentDefinition } from '../tools/agent/agent-definitions.ts';
import { AGENT_TOOL_NAME, agentToolFor } from '../tools/agent/agent-tool.ts';
import { assembleToolPool, createToolRegistry } from '../tools/registry.ts';
import type { Tool, ToolUseContext } from '../tools/tool.ts';
import { query, type QueryEvent, type QueryParams } from './query.ts';
import { prepareResume, type ResumeCalls } from './resume.ts';
import { agentCallsToReenter, withReentries } from './subagent-reentry.ts';
import { addUsage } from './background-agent.ts';
import { BackgroundNotifier, unreportedBackgroundAgents } from './background-notifications.ts';
import { createSubagentRunner } from './subagent-runner.ts';
import { buildSystemPrompt } from './system-prompt.ts';
import type { TurnDeps } from './turn-deps.ts';
import type { TurnRecorder } from './turn-recorder.ts';
import type { TurnRun } from './turn-run.ts';
import type { TurnStop } from './turn-stop.ts';

/**
 * The start of a turn's loop: reload the conversation (only what follows the last compact
 * boundary, with the replacement decisions), take the answers of a resume, re-enter sub-agents
 * a dead turn left running (subagent-reentry.ts), repair other dangling
 * tool_uses, append the prompt, and start the query loop on it.
 */
export async function openTurnLoop(
  deps: TurnDeps,
  run: TurnRun,
  recorder: TurnRecorder,
  tools: { workspace: ToolUseContext['workspace']; signal: AbortSignal; stop: TurnStop },
): Promise<AsyncGenerator<QueryEvent>> {
  const { session, log } = run;
  const loaded = await loadSessionContext(deps, session);
  const conversation = loaded.conversation;
  // The log, not the session's counter, is the truth: a crash between appending a message and
  // moving the counter leaves the counter one behind.
  recorder.writer.skipTo(loaded.lastSeq + 1);
  const external = await mcpTools(deps, run, recorder);
  // Large MCP results are persisted like built-in ones: the context economy finds them by name too.
  const contextTools = external.length > 0 ? createToolRegistry([...deps.tools.tools, ...external]) : deps.tools;
  const context = createContextManager({ ...deps, tools: contextTools }, { session, owner: run.owner, append: recorder.append, loaded, log });
  let resume: ResumeCalls | undefined;
  if (run.opts.resume) {
    const prepared = await prepareResume(deps.approvals, session.sessionId, conversation, recorder.settings);
    resume = prepared.resume;
    if (prepared.settings !== recorder.settings) await recorder.saveSettings(prepared.settings);
  }
  const waiting = new Set(resume?.blocks.map((b) => b.id) ?? []);
  const open = danglingToolUses(conversation).filter((id) => !waiting.has(id));
  const reentries = agentCallsToReenter(conversation, open);
  const dangling = open.filter((id) => !reentries.some((call) => call.id === id));
  if (reentries.length > 0) log.warn('re-entering sub-agents a dead turn left running', { toolUseIds: reentries.map((c) => c.id) });
  resume = withReentries(resume, reentries);
  if (dangling.length > 0) {
    log.warn('repairing dangling tool_use blocks', { toolUseIds: dangling });
    conversation.push(await recorder.append('synthetic', 'user', syntheticResults(dangling)));
  }
  const notifier = await reportBackgroundAgents(deps, run, recorder, conversation);
  if (run.opts.prompt !== undefined) conversation.push(await recorder.append('prompt', 'user', [{ type: 'text', text: run.opts.prompt }]));
  return query(queryParams(deps, run, recorder, { conversation, resume, context, external, notifier, ...tools }));
}

/**
 * Background sub-agents that finished since the log last heard of them: their notifications go
 * in before the prompt (their spend joins the session's usage with them); those that should be
 * running but are not get their invocation again. The notifier then watches during the turn.
 */
async function reportBackgroundAgents(deps: TurnDeps, run: TurnRun, recorder: TurnRecorder, conversation: StoredMessage[]): Promise<BackgroundNotifier> {
  const notifier = new BackgroundNotifier(deps, run.session.sessionId, unreportedBackgroundAgents(run.session.sessionId, conversation), run.log);
  const notes = await notifier.take({ restartStalled: true });
  for (const text of notes.texts) conversation.push(await recorder.append('synthetic', 'user', [{ type: 'text', text }]));
  addUsage(recorder.usage, notes.usage);
  await notes.delivered();
  return notifier;
}

/** Mid-turn notifications: their spend joins the session's usage once they are recorded. */
async function takeNotifications(notifier: BackgroundNotifier, recorder: TurnRecorder): Promise<{ texts: string[]; delivered: () => Promise<void> }> {
  const notes = await notifier.take({ restartStalled: false });
  return { texts: notes.texts, delivered: async () => { addUsage(recorder.usage, notes.usage); await notes.delivered(); } };
}

/** The session's MCP tools (none without servers: the MCP SDK is not even loaded then). */
async function mcpTools(deps: TurnDeps, run: TurnRun, recorder: TurnRecorder): Promise<Tool[]> {
  const servers = recorder.settings?.mcpServers;
  if (!servers || Object.keys(servers).length === 0 || !deps.mcp) return [];
  return deps.mcp.toolsFor({ sessionId: run.session.sessionId, servers }, run.log);
}

function queryParams(
  deps: TurnDeps,
  run: TurnRun,
  recorder: TurnRecorder,
  loop: { conversation: StoredMessage[]; resume: ResumeCalls | undefined; context: ContextManager; external: Tool[]; notifier: BackgroundNotifier; workspace: ToolUseContext['workspace']; signal: AbortSignal; stop: TurnStop },
): QueryParams {
  const { config } = deps;
  const { session, turnId, log, deadlineAt } = run;
  const permissions = permissionContextFor(recorder.settings, { defaultMode: config.permissions.defaultMode, policy: config.permissions.policy, turn: run.opts.settings });
  const agents = activeAgents((recorder.settings?.agents ?? []).map(customAgentDefinition));
  const registry = assembleToolPool({
    builtins: deps.tools.tools.map((tool) => (tool.name === AGENT_TOOL_NAME ? agentToolFor(agents) : tool)), external: loop.external, rules: permissions.rules,
    toolSearch: { mode: recorder.settings?.toolSearch ?? config.toolSearch.mode, model: config.model.name, contextWindow: config.model.contextWindow },
  });
  const hooks = [...(deps.hooks ?? []), ...hooksFor(recorder.settings, deps.outbound)];
  const retry = { maxRetries: config.model.maxRetries, baseDelayMs: config.model.retryBaseDelayMs, fallbackModel: config.model.fallbackName };
  // Sub-agents (the Agent tool) run in this turn, on its budget, permissions and hooks.
  const subagents = createSubagentRunner(
    { deps, session, turnId, owner: run.owner, log, recorder, beforeModelCall: () => loop.stop.beforeModelCall(), permissions, hooks, retry, onBackgroundLaunch: (id) => loop.notifier.add(id), leaseHeld: () => recorder.leaseHeld() },
    { pool: registry, agents, isForkChild: false },
  );
  return {
    client: deps.model,
    model: config.model.name,
    maxTokens: config.model.maxTokens,
    system: buildSystemPrompt(),
    messages: toApiMessages(loop.conversation),
    registry,
    toolContext: {
      sessionId: session.sessionId, turnId, workspace: loop.workspace, signal: loop.signal, log,
      persistedResults: createPersistedResultReader(deps.blobs, session.sessionId), subagents,
    },
    permissions,
    hooks,
    maxToolConcurrency: config.maxToolConcurrency,
    // The per-turn model-call cap is a budget (maxModelCallsPerTurn), checked before each call with the others.
    maxTurns: Number.MAX_SAFE_INTEGER,
    beforeModelCall: () => loop.stop.beforeModelCall(),
    signal: loop.signal,
    shouldCheckpoint: deadlineAt === undefined ? undefined : () => deadlineAt - deps.clock() <= config.turn.checkpointMarginMs,
    resume: loop.resume,
    takeNotifications: () => takeNotifications(loop.notifier, recorder),
    context: loop.context,
    retry,
    leaseHeld: () => recorder.leaseHeld(),
  };
}
