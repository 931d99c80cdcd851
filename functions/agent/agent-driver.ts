import type { ContextManager } from '../context/context-manager.ts';
import type { HookDefinition } from '../hooks/types.ts';
import { hooksFor, permissionContextFor, type SessionSettings, type TurnSettings } from '../session-settings/session-settings.ts';
import type { PermissionContext, RuleLists } from '../permissions/types.ts';
import { assertNever } from '../shared/assert-never.ts';
import type { Logger } from '../shared/logger.ts';
import { activeAgents, customAgentDefinition, type AgentDefinition } from '../tools/agent/agent-definitions.ts';
import { AGENT_TOOL_NAME, agentToolFor } from '../tools/agent/agent-tool.ts';
import { assembleToolPool, type ToolRegistry } from '../tools/registry.ts';
import type { Tool } from '../tools/tool.ts';
import { query, type QueryEvent, type QueryParams } from './query.ts';
import type { TurnDeps } from './turn-deps.ts';

/**
 * The one agent driver: every kind of agent run (a session's turn, a foreground sub-agent, a
 * fork, a background sub-agent) gets its tool pool, permissions, hooks, retry and query
 * parameters here, and its events recorded through one exhaustive recorder into the log its
 * scope names. The callers (turn-loop.ts, subagent-runner.ts, background-agent.ts) only say
 * which scope they are and supply what differs.
 */

/**
 * Where one kind of run's events go: a handler for every kind of query event, so a new kind
 * fails to compile until every log says what it means for it.
 */
export type AgentLog = { [K in QueryEvent['type']]: (event: Extract<QueryEvent, { type: K }>) => Promise<void> | void };

/** Which kind of run, with what only that kind has. */
export type AgentScope =
  /** A session's turn: its log is the session's; a person can answer asks; it resumes answered calls and takes notifications. */
  | { kind: 'turn'; log: AgentLog; resume: QueryParams['resume']; takeNotifications: NonNullable<QueryParams['takeNotifications']> }
  /** A named sub-agent inside a turn: its own log, nobody to answer an ask. */
  | { kind: 'subagent'; log: AgentLog }
  /** A fork of the parent's request inside a turn: as a sub-agent. */
  | { kind: 'fork'; log: AgentLog }
  /** A background sub-agent in its own invocation: its own log, nobody to answer an ask. */
  | { kind: 'background'; log: AgentLog; takeNotifications?: QueryParams['takeNotifications'] };

/** What a session's settings make of every run in it: permissions, hooks, our retries. */
export interface AgentControls {
  permissions: PermissionContext;
  hooks: readonly HookDefinition[];
  retry: NonNullable<QueryParams['retry']>;
}

/** What a repository's `.claude/settings.json` adds to a run's controls (repository-settings-load.ts). */
export interface RepositoryControls {
  rules: RuleLists;
  hooks: readonly HookDefinition[];
}

export function agentControls(
  deps: Pick<TurnDeps, 'config' | 'hooks' | 'outbound'>,
  settings: SessionSettings | undefined,
  turn?: TurnSettings,
  repository?: RepositoryControls,
): AgentControls {
  const { config } = deps;
  return {
    permissions: permissionContextFor(settings, {
      defaultMode: config.permissions.defaultMode,
      policy: config.permissions.policy,
      ...(turn ? { turn } : {}),
      ...(repository ? { repository: repository.rules } : {}),
    }),
    hooks: [...(deps.hooks ?? []), ...hooksFor(settings, deps.outbound), ...(repository?.hooks ?? [])],
    retry: { maxRetries: config.model.maxRetries, baseDelayMs: config.model.retryBaseDelayMs, fallbackModel: config.model.fallbackName },
  };
}

/** The session's MCP tools (none without servers: the MCP SDK is not even loaded then). */
export async function sessionMcpTools(deps: Pick<TurnDeps, 'mcp'>, sessionId: string, settings: SessionSettings | undefined, log: Logger): Promise<Tool[]> {
  const servers = settings?.mcpServers;
  if (!servers || Object.keys(servers).length === 0 || !deps.mcp) return [];
  return deps.mcp.toolsFor({ sessionId, servers }, log);
}

/**
 * The session's tools as its turns get them: the built-ins (the Agent tool knowing the
 * session's agents), its MCP servers' tools, its deny rules and its ToolSearch mode. A turn and
 * a background sub-agent start from this pool; a named agent's filters narrow it after.
 */
export function sessionToolPool(
  deps: Pick<TurnDeps, 'config' | 'tools'>,
  settings: SessionSettings | undefined,
  external: readonly Tool[],
  permissions: PermissionContext,
): { registry: ToolRegistry; agents: AgentDefinition[] } {
  const { config } = deps;
  const agents = sessionAgents(settings);
  const registry = assembleToolPool({
    builtins: deps.tools.tools.map((tool) => (tool.name === AGENT_TOOL_NAME ? agentToolFor(agents) : tool)),
    external,
    rules: permissions.rules,
    toolSearch: { mode: settings?.toolSearch ?? config.toolSearch.mode, model: config.model.name, contextWindow: config.model.contextWindow },
  });
  return { registry, agents };
}

/** The agents a session's Agent tool offers: the built-in ones and its own definitions. */
export function sessionAgents(settings: SessionSettings | undefined): AgentDefinition[] {
  return activeAgents((settings?.agents ?? []).map(customAgentDefinition));
}

/** A named agent's tools, as its filters left them out of its parent's pool (the parent's rules already applied). */
export function narrowedToolPool(tools: readonly Tool[]): ToolRegistry {
  return assembleToolPool({ builtins: tools.filter((t) => !t.isExternal), external: tools.filter((t) => t.isExternal) });
}

/**
 * What every run supplies, whatever its kind: its prompt, messages, tools and tool context, its
 * session's controls, its stop checks (`shouldCheckpoint` near an invocation's deadline,
 * `leaseHeld` of the turn it is part of) and its context economy.
 */
export type AgentRun = Pick<
  QueryParams,
  'system' | 'messages' | 'userContext' | 'registry' | 'toolContext' | 'beforeModelCall' | 'signal' | 'shouldCheckpoint' | 'leaseHeld' | 'logDurable'
> & {
  controls: AgentControls;
  context: ContextManager;
};

/** The query parameters of every kind of run. */
export function agentQueryParams(deps: Pick<TurnDeps, 'config' | 'model' | 'tracing'>, scope: AgentScope, run: AgentRun): QueryParams {
  const { config } = deps;
  return {
    client: deps.model,
    model: config.model.name,
    maxTokens: config.model.maxTokens,
    system: run.system,
    messages: run.messages,
    registry: run.registry,
    toolContext: run.toolContext,
    hooks: run.controls.hooks,
    maxToolConcurrency: config.maxToolConcurrency,
    tracing: deps.tracing,
    beforeModelCall: run.beforeModelCall,
    signal: run.signal,
    context: run.context,
    retry: run.controls.retry,
    ...(run.shouldCheckpoint ? { shouldCheckpoint: run.shouldCheckpoint } : {}),
    ...(run.leaseHeld ? { leaseHeld: run.leaseHeld } : {}),
    ...(run.logDurable ? { logDurable: run.logDurable } : {}),
    ...(run.userContext !== undefined ? { userContext: run.userContext } : {}),
    ...scopeParams(scope, run.controls.permissions),
  };
}

/** What depends on the kind of run: who can answer an ask, and what only a turn carries. */
function scopeParams(scope: AgentScope, permissions: PermissionContext): Pick<QueryParams, 'permissions' | 'resume' | 'takeNotifications'> {
  switch (scope.kind) {
    case 'turn':
      return { permissions, resume: scope.resume, takeNotifications: scope.takeNotifications };
    case 'background':
      // Nobody can answer it either; messages sent to it while it runs (SendMessage) join before its next model call.
      return { permissions: { ...permissions, unattended: true }, ...(scope.takeNotifications ? { takeNotifications: scope.takeNotifications } : {}) };
    case 'subagent':
    case 'fork':
      // Nobody can answer a sub-agent's question mid-call: an ask is a deny, as for unattended sessions.
      return { permissions: { ...permissions, unattended: true } };
    default:
      return assertNever(scope, 'agent scope');
  }
}

/** Runs the query loop of one run, recording each event into its scope's log. */
export async function driveAgent(deps: Pick<TurnDeps, 'config' | 'model' | 'tracing'>, scope: AgentScope, run: AgentRun): Promise<void> {
  for await (const event of query(agentQueryParams(deps, scope, run))) await recordAgentEvent(scope.log, event);
}

/** The one recorder: each event to its log's handler; every kind is handled. */
export async function recordAgentEvent(log: AgentLog, event: QueryEvent): Promise<void> {
  switch (event.type) {
    case 'text_delta':
      return log.text_delta(event);
    case 'assistant':
      return log.assistant(event);
    case 'tool_progress':
      return log.tool_progress(event);
    case 'tool_result':
      return log.tool_result(event);
    case 'permission_request':
      return log.permission_request(event);
    case 'tool_deferred':
      return log.tool_deferred(event);
    case 'tombstone':
      return log.tombstone(event);
    case 'retry':
      return log.retry(event);
    case 'fallback':
      return log.fallback(event);
    case 'meta_user':
      return log.meta_user(event);
    case 'done':
      return log.done(event);
    default:
      return assertNever(event, 'query event');
  }
}
