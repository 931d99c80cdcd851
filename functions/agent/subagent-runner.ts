import { runTodoList } from '../tools/todo-write-tool.ts';
import type { ContentBlockParam, MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { createContextManager } from '../context/context-manager.ts';
import { createContentReplacementState } from '../context/replacement-state.ts';
import type { LogAppender } from '../context/session-context.ts';
import { contextFromLog } from '../context/session-context.ts';
import { danglingToolUses, syntheticResults, toApiMessages } from '../context/transcript.ts';
import type { Logger } from '../shared/logger.ts';
import { agentIdFor, agentLogId } from '../stores/agent-log.ts';
import type { StoredMessage } from '../stores/message-store.ts';
import type { SessionRecord } from '../stores/session-store.ts';
import type { AgentDefinition } from '../tools/agent/agent-definitions.ts';
import { AGENT_TOOL_NAME, resolveAgentTools } from '../tools/agent/agent-tool-filter.ts';
import { forkStartMessages } from '../tools/agent/fork-messages.ts';
import type { ForkBase, SubagentLaunch, SubagentRequest, SubagentResult } from '../tools/agent/subagent-types.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import { ToolError, type SubagentRunner, type ToolContext } from '../tools/tool.ts';
import { driveAgent, narrowedToolPool, type AgentControls, type AgentScope } from './agent-driver.ts';
import type { QueryParams, TurnStopReason } from './query.ts';
import { answerText, subagentLog, totalTokensOf, type DriveOutcome, type SubagentLogTarget } from './subagent-log.ts';
import type { TurnDeps } from './turn-deps.ts';
import { GIT_SNAPSHOT_HEADING } from './environment-snapshot.ts';
import type { ProjectContext } from './project-context.ts';

/** What every sub-agent of one turn shares with it: the engine, the budget, permissions and hooks. */
export interface SubagentScope {
  deps: TurnDeps;
  session: SessionRecord;
  turnId: string;
  owner: string;
  log: Logger;
  /** Sub-agents' model calls count toward the turn and the session (budgets, usage, cost). */
  recorder: SubagentLogTarget['recorder'];
  beforeModelCall: () => TurnStopReason | undefined;
  controls: AgentControls;
  /** A background sub-agent was launched from this turn: its notification may come while it runs. */
  onBackgroundLaunch?: (agentLogId: string) => void;
  /** The parent turn's lease check: a sub-agent's call with effects waits on it as the parent's own calls do. */
  leaseHeld?: QueryParams['leaseHeld'];
  /** What the turn tells the model about its project; sub-agents get their share (`definedAgent`). */
  project?: Pick<ProjectContext, 'environment' | 'userContext' | 'userContextWithoutInstructions' | 'skills'>;
}

/** Where in the tree a runner sits: the tools of the agent that spawns, and what it may spawn. */
export interface SubagentLevel {
  pool: ToolRegistry;
  agents: readonly AgentDefinition[];
  isForkChild: boolean;
}

/** The workspace note every sub-agent's prompt ends with, before the session's environment section. */
const WORKSPACE_NOTE = 'The workspace is mounted at /workspace; all file paths you use must be absolute paths under /workspace.';

/** Read-only search agents go without the project's instructions and the git snapshot: they only look things up. */
const WITHOUT_INSTRUCTIONS = new Set(['Explore', 'Plan']);

export function createSubagentRunner(scope: SubagentScope, level: SubagentLevel): SubagentRunner {
  return { agents: level.agents, isForkChild: level.isForkChild, run: (request, ctx) => runSubagent(scope, level, request, ctx) };
}

/** How a sub-agent starts: its prompt, tools and first messages, and the runner its own Agent calls get. */
export interface ChildSetup {
  agentType: string;
  oneShot: boolean;
  system: string;
  registry: ToolRegistry;
  start: MessageParam[];
  replacement: () => ReturnType<typeof createContentReplacementState>;
  child: SubagentRunner | undefined;
  /** The text that opens its first user message in every request (its share of the project context). */
  userContext?: string;
}

async function runSubagent(scope: SubagentScope, level: SubagentLevel, request: SubagentRequest, ctx: ToolContext): Promise<SubagentResult | SubagentLaunch> {
  if (request.background && request.agent) return launchBackgroundAgent(scope, level, { ...request, agent: request.agent }, ctx);
  const startedAt = scope.deps.clock();
  const agentId = agentIdFor(request.toolUseId);
  const setup = request.agent ? definedAgent(scope, level, request.agent, request.prompt) : forkedAgent(scope, level, ctx, request.prompt);
  const log = scope.log.child({ agentId, agentType: setup.agentType });
  const childLog = await openChildLog(scope, agentLogId(scope.session.sessionId, agentId));
  const messages = await startingMessages(childLog, setup);
  const progress = (event: Record<string, unknown>) => ctx.onProgress?.({ agentId, agentType: setup.agentType, ...event });
  progress({ type: 'agent_start', description: request.description });
  log.info('sub-agent started', { resumed: childLog.loaded.conversation.length > 0 });
  const outcome =
    finishedOutcome(childLog.loaded.conversation) ??
    (await drive(scope, setup, { kind: request.agent ? 'subagent' : 'fork', messages, ctx, log, append: childLog.append, loaded: childLog.loaded, progress }));
  progress({ type: 'agent_end', stopReason: outcome.stopReason });
  if (outcome.stopReason === 'model_error') throw new ToolError(`Agent ${agentId} failed: ${outcome.error ?? 'model error'}`);
  return {
    agentId,
    agentType: setup.agentType,
    oneShot: setup.oneShot,
    content: outcome.text,
    totalTokens: outcome.totalTokens,
    totalToolUseCount: outcome.toolUses,
    totalDurationMs: scope.deps.clock() - startedAt,
  };
}

/**
 * `run_in_background`: the sub-agent's log gets its prompt now, its record is created (status
 * `running`, no lease yet), and its own asynchronous invocation is asked for
 * (background-agent.ts runs it). The call answers at once; the result comes as a notification.
 */
async function launchBackgroundAgent(
  scope: SubagentScope,
  level: SubagentLevel,
  request: SubagentRequest & { agent: AgentDefinition },
  ctx: ToolContext,
): Promise<SubagentLaunch> {
  const { deps, session } = scope;
  const agentId = agentIdFor(request.toolUseId);
  const logId = agentLogId(session.sessionId, agentId);
  // Built now so a definition naming no usable tool is reported at launch, as for a foreground agent.
  const setup = definedAgent(scope, level, request.agent, request.prompt, true);
  await startingMessages(await openChildLog(scope, logId), setup);
  const now = deps.clock();
  await deps.backgroundAgents.create({
    sessionId: logId,
    parentSessionId: session.sessionId,
    agentId,
    toolUseId: request.toolUseId,
    agentType: setup.agentType,
    description: request.description,
    status: 'running',
    createdAt: new Date(now).toISOString(),
    updatedAt: new Date(now).toISOString(),
    startedAt: now,
    modelCalls: 0,
    usage: { inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0, costUsd: 0 },
    toolUses: 0,
  });
  // If this fails the record stays `running` without a lease: the session's next turn asks again.
  await deps.continuations.schedule({ kind: 'run_subagent', sessionId: session.sessionId, agentLogId: logId });
  scope.onBackgroundLaunch?.(logId);
  ctx.onProgress?.({ agentId, agentType: setup.agentType, type: 'agent_launched', description: request.description });
  scope.log.info('background sub-agent launched', { agentId, agentType: setup.agentType });
  return { status: 'async_launched', agentId, description: request.description, prompt: request.prompt };
}

/** A named agent: its own prompt, its tools as the three filter layers leave them, a fresh replacement state. */
export function definedAgent(scope: SubagentScope, level: SubagentLevel, agent: AgentDefinition, prompt: string, isAsync = false): ChildSetup {
  const resolved = resolveAgentTools(agent, level.pool.tools, { isAsync });
  if (resolved.invalidToolSpecs.length > 0)
    scope.log.warn('agent definition names tools that are not available', { agentType: agent.agentType, invalid: resolved.invalidToolSpecs });
  const registry = narrowedToolPool(resolved.tools);
  const allowed = resolved.allowedAgentTypes?.map((t) => t.toLowerCase());
  const agents = allowed ? level.agents.filter((a) => allowed.includes(a.agentType.toLowerCase())) : level.agents;
  const canSpawn = registry.find(AGENT_TOOL_NAME) !== undefined;
  return {
    agentType: agent.agentType,
    oneShot: agent.oneShot === true,
    registry,
    ...subagentContext(scope.project, agent),
    start: [{ role: 'user', content: [{ type: 'text', text: prompt }] }],
    replacement: createContentReplacementState,
    child: canSpawn ? createSubagentRunner(scope, { pool: registry, agents, isForkChild: false }) : undefined,
  };
}

/** A named agent's system prompt (its own, the workspace note, the environment) and its opening block. */
function subagentContext(project: SubagentScope['project'], agent: AgentDefinition): { system: string; userContext?: string } {
  const base = `${agent.systemPrompt}\n\n${WORKSPACE_NOTE}`;
  if (!project) return { system: base };
  const lean = WITHOUT_INSTRUCTIONS.has(agent.agentType);
  const environment = lean ? withoutGitSnapshot(project.environment) : project.environment;
  return { system: `${base}\n\n${environment}`, userContext: lean ? project.userContextWithoutInstructions : project.userContext };
}

function withoutGitSnapshot(environment: string): string {
  const at = environment.indexOf(`\n\n${GIT_SNAPSHOT_HEADING}`);
  return at === -1 ? environment : environment.slice(0, at);
}

/** A fork: the parent's exact system prompt, tools and messages, then its directive; the parent's replacement decisions cloned. */
function forkedAgent(scope: SubagentScope, level: SubagentLevel, ctx: ToolContext, prompt: string): ChildSetup {
  const base: ForkBase | undefined = ctx.forkBase?.();
  if (!base) throw new ToolError('A fork needs the request it was called from; name a subagent_type instead.');
  return {
    agentType: 'fork',
    oneShot: false,
    system: base.system,
    registry: level.pool,
    ...(base.userContext !== undefined ? { userContext: base.userContext } : {}),
    start: [...base.messages, ...forkStartMessages(base, prompt)],
    replacement: () => base.cloneReplacementState?.() ?? createContentReplacementState(),
    // The fork keeps the Agent tool (its tools bytes are the parent's) but may not fork again.
    child: createSubagentRunner(scope, { ...level, isForkChild: true }),
  };
}

export interface ChildLog {
  append: LogAppender;
  loaded: ReturnType<typeof contextFromLog>;
}

/**
 * The sub-agent's own log, written item by item the moment each exists (create-only on its seq),
 * in its own partition. An existing log (a sub-agent that ran before) is continued, not redone.
 */
export async function openChildLog(scope: Pick<SubagentScope, 'deps' | 'turnId'>, logId: string): Promise<ChildLog> {
  const { deps } = scope;
  const existing = await deps.messages.loadFrom(logId);
  const loaded = contextFromLog(existing);
  let nextSeq = loaded.lastSeq + 1;
  const append: LogAppender = async (kind, role, content, extra = {}) => {
    const message: StoredMessage = {
      sessionId: logId,
      seq: nextSeq,
      uuid: deps.newId('msg'),
      turnId: scope.turnId,
      kind,
      role,
      content,
      createdAt: new Date(deps.clock()).toISOString(),
      ...extra,
    };
    await deps.messages.append(message);
    nextSeq += 1;
    return message;
  };
  return { append, loaded };
}

/** A new log gets the start written first; a continued one goes on from what it holds (dangling calls repaired). */
export async function startingMessages(childLog: ChildLog, setup: ChildSetup): Promise<MessageParam[]> {
  const conversation = childLog.loaded.conversation;
  if (conversation.length === 0) {
    for (const m of setup.start)
      await childLog.append(m.role === 'user' ? 'prompt' : 'synthetic', m.role === 'user' ? 'user' : 'assistant', m.content as ContentBlockParam[]);
    return setup.start;
  }
  const dangling = danglingToolUses(conversation);
  if (dangling.length > 0) conversation.push(await childLog.append('synthetic', 'user', syntheticResults(dangling)));
  return toApiMessages(conversation);
}

/**
 * A continued log that already ends in the sub-agent's final answer (its process died after
 * storing it, before the parent had the result): that answer, without asking the model again.
 */
export function finishedOutcome(log: readonly StoredMessage[]): DriveOutcome | undefined {
  const last = log.at(-1);
  if (last?.role !== 'assistant' || last.kind !== 'assistant' || last.content.some((b) => b.type === 'tool_use')) return undefined;
  return { stopReason: 'end_turn', toolUses: 0, text: answerText(last.content), totalTokens: last.usage ? totalTokensOf(last.usage) : 0 };
}

export interface DriveInput {
  /** A named agent or a fork (foreground), or a background agent in its own invocation. */
  kind: 'subagent' | 'fork' | 'background';
  messages: MessageParam[];
  /** Asked after each round of tool results (a background agent near its invocation's deadline). */
  shouldCheckpoint?: () => boolean;
  /** A background agent's messages sent while it runs (SendMessage), taken before each model call after the first. */
  takeMessages?: NonNullable<QueryParams['takeNotifications']>;
  ctx: ToolContext;
  log: Logger;
  append: LogAppender;
  loaded: ChildLog['loaded'];
  progress: (event: Record<string, unknown>) => void;
}

/** Runs the query loop for the sub-agent, writing each event to its log and reporting progress to the parent's call. */
export async function drive(scope: SubagentScope, setup: ChildSetup, input: DriveInput): Promise<DriveOutcome> {
  const { deps } = scope;
  const outcome: DriveOutcome = { stopReason: 'end_turn', text: [], totalTokens: 0, toolUses: 0 };
  const loaded = { ...input.loaded, replacementState: input.loaded.conversation.length > 0 ? input.loaded.replacementState : setup.replacement() };
  // A sub-agent never compacts: a compaction moves its session's reload pointer, which is the parent's.
  const contextDeps = { ...deps, config: { ...deps.config, context: { ...deps.config.context, autoCompact: false } } };
  const context = createContextManager(contextDeps, {
    session: { ...scope.session, autoCompactFailures: 0, reloadFromSeq: undefined },
    owner: scope.owner,
    append: input.append,
    loaded,
    log: input.log,
  });
  const log = subagentLog({ append: input.append, recorder: scope.recorder, progress: input.progress }, outcome);
  const agentScope: AgentScope =
    input.kind === 'background' && input.takeMessages ? { kind: 'background', log, takeNotifications: input.takeMessages } : { kind: input.kind, log };
  await driveAgent(deps, agentScope, {
    system: setup.system,
    messages: input.messages,
    registry: setup.registry,
    controls: scope.controls,
    beforeModelCall: scope.beforeModelCall,
    ...(setup.userContext !== undefined ? { userContext: setup.userContext } : {}),
    signal: input.ctx.signal,
    context,
    toolContext: {
      sessionId: input.ctx.sessionId,
      turnId: input.ctx.turnId,
      workspace: input.ctx.workspace,
      signal: input.ctx.signal,
      log: input.log,
      ...(input.ctx.persistedResults ? { persistedResults: input.ctx.persistedResults } : {}),
      ...(setup.child ? { subagents: setup.child } : {}),
      // A sub-agent keeps its own list for its run; the session's list is the main agent's.
      todos: runTodoList(),
      // The session's network and model account, as its parent has them.
      ...(input.ctx.web ? { web: input.ctx.web } : {}),
      ...(input.ctx.sideModel ? { sideModel: input.ctx.sideModel } : {}),
      ...(scope.project ? { skills: scope.project.skills } : {}),
      // The session's schedules and its sub-agents, as the parent's own calls reach them (the Cron tools, SendMessage).
      ...(input.ctx.schedules ? { schedules: input.ctx.schedules } : {}),
      ...(input.ctx.agentMessages ? { agentMessages: input.ctx.agentMessages } : {}),
    },
    ...(input.shouldCheckpoint ? { shouldCheckpoint: input.shouldCheckpoint } : {}),
    ...(scope.leaseHeld ? { leaseHeld: scope.leaseHeld } : {}),
  });
  return outcome;
}
