import type { ContentBlockParam, MessageParam, ToolResultBlockParam, ToolUnion } from '@anthropic-ai/sdk/resources/messages';
import type { AssistantResponse } from '../model/model-stream.ts';
import type { z } from 'zod';
import type { CommandParts, PermissionCheck, PermissionMode } from '../permissions/types.ts';
import type { Logger } from '../shared/logger.ts';
import type { TodoItem } from '../stores/session-store.ts';
import type { WorkspaceSession } from '../runner-client/workspace-session.ts';
import type { AgentDefinition } from './agent/agent-definitions.ts';
import type { SkillDefinition } from './skill/skill-definition.ts';
import type { ForkBase, SubagentLaunch, SubagentRequest, SubagentResult } from './agent/subagent-types.ts';

/** What a tool call can see and use. Built per call by the executor. */
export interface ToolContext {
  sessionId: string;
  turnId: string;
  toolUseId: string;
  /** The session's workspace through the runner; tracks version and cwd across calls. */
  workspace: WorkspaceSession;
  signal: AbortSignal;
  log: Logger;
  /** Progress for clients while the call runs (forwarded at once by the executor). */
  onProgress?: (progress: unknown) => void;
  /** Large results persisted by the harness (functions/context): Read opens them by their reserved path. */
  persistedResults?: PersistedResultReader;
  /** Runs sub-agents for the Agent tool; absent where none may run. */
  subagents?: SubagentRunner;
  /** The model request this call's response answered (set by the query loop; a fork repeats it). */
  forkBase?: () => ForkBase | undefined;
  /** The agent's task list (TodoWrite); absent where no list is kept. */
  todos?: TodoList;
  /** The repository's skills as the turn read them at its start (the Skill tool); absent: none. */
  skills?: readonly SkillDefinition[];
  /**
   * How long a tool with an `interaction` may wait for a person (ms); absent or 0 where no one
   * can answer (an unattended run, a sub-agent): the call then runs at once without an answer.
   */
  interactionTimeoutMs?: number;
  /** The call runs after its pending interaction closed (answered, or timed out): its input holds what came back. */
  resumedInteraction?: boolean;
  /** The session's permission mode as plan mode changes it (EnterPlanMode, ExitPlanMode); absent in a sub-agent. */
  permissionMode?: PermissionModeSwitch;
  /** The network as the session's own calls may use it (WebFetch); absent where a run has none. */
  web?: WebAccess;
  /** Model requests a tool makes on the session's account (WebFetch, WebSearch); absent where none may be made. */
  sideModel?: SideModel;
}

/**
 * The main agent's permission mode, for the tools that move in and out of plan mode: a change
 * applies to the calls after it at once and is kept in the session for its next turns. Declared
 * here, where it is used, so tools need nothing of the engine.
 */
export interface PermissionModeSwitch {
  current(): PermissionMode;
  set(mode: PermissionMode): Promise<void>;
  /** A plan (ExitPlanMode) waits for a person: false in an unattended session, unless it is "plan first". */
  readonly plansAwaitApproval: boolean;
}

/**
 * The web under the session's outbound rules (built by the engine: functions/agent/session-web.ts).
 * Declared here, where it is used, so tools need nothing of the engine or the policy.
 */
export interface WebAccess {
  /** A GET under the session's rules; a 3xx comes back as it is, never followed. Throws a sentence saying why a destination is refused. */
  get(url: URL, init: { headers: Record<string, string>; signal: AbortSignal }): Promise<Response>;
  /** True when plain http:// may reach this URL's host (the operator names it); other http:// URLs are upgraded to https://. */
  plainHttpAllowed(url: URL): boolean;
}

/** One model request a tool makes; priced into the session's usage and budgets like the agent's own calls. */
export interface SideModelRequest {
  system?: string;
  messages: MessageParam[];
  /** Server tools the provider runs (web search). */
  tools?: ToolUnion[];
}

export interface SideModel {
  /** Whether the provider offers the web search server tool and the operator turned it on (WebSearch). */
  readonly webSearch: boolean;
  call(request: SideModelRequest, signal: AbortSignal): Promise<AssistantResponse>;
}

/**
 * An agent's task list: the session's for its main agent (kept in the session record and streamed
 * as a `todos` event), a run's own for a sub-agent. Declared here, where it is used, so tools
 * need nothing of the engine.
 */
export interface TodoList {
  /** Replaces the whole list. */
  write(todos: TodoItem[]): Promise<void>;
}

/**
 * Lets the Read tool open results the harness persisted (functions/context): the hook it calls
 * for paths in the reserved folder. Declared here, where it is used, so tools need nothing of
 * the context layer.
 */
export interface PersistedResultReader {
  /** True when `path` is in the reserved folder (Read must not send it to the runner). */
  owns(path: string): boolean;
  /** The stored text, or undefined when there is no such result. */
  read(path: string): Promise<string | undefined>;
}

/**
 * Runs sub-agents on the turn engine (functions/agent/subagent-runner.ts). Declared with the tool
 * contract, so tools need nothing of the engine.
 */
export interface SubagentRunner {
  /** The agent types this agent may spawn (built-ins and the session's custom agents, narrowed by `Agent(a, b)`). */
  readonly agents: readonly AgentDefinition[];
  /** Inside a fork: a fork may not fork again. */
  readonly isForkChild: boolean;
  run(request: SubagentRequest, ctx: ToolContext): Promise<SubagentResult | SubagentLaunch>;
}

/** The part of the context that tools may change for the calls after them (contextModifier). */
export type ToolUseContext = Omit<ToolContext, 'toolUseId'>;

export interface ToolResult<Output> {
  data: Output;
  /** Extra content for the model, sent in the same user message after the tool_result. */
  newMessages?: ContentBlockParam[];
  /**
   * Changes the context of later calls. From a concurrency-safe call it applies after its whole
   * batch, in call order; from a serial call, at once.
   */
  contextModifier?: (ctx: ToolUseContext) => ToolUseContext;
}

export type ValidationResult = { ok: true } | { ok: false; message: string };

/**
 * The tool contract. Safety flags are decided per input; the builder's defaults are
 * fail-closed (not read-only, not concurrency-safe, not destructive-exempt, interrupt blocks),
 * so a tool that forgets one is treated as the riskiest kind.
 */
// biome-ignore lint/suspicious/noExplicitAny: a pool holds tools of different inputs; with `unknown` no tool would fit (its call takes its own Input)
export interface Tool<Input = any, Output = any> {
  readonly name: string;
  readonly aliases: readonly string[];
  readonly inputSchema: z.ZodType<Input>;
  /**
   * The JSON schema the model sees, for tools whose schema arrives at run time (external/MCP
   * tools). When absent it is derived from `inputSchema`.
   */
  readonly inputJSONSchema?: Record<string, unknown>;
  /** The description the model reads. */
  readonly description: string;
  /** Result text longer than this is persisted instead of inlined (Infinity: never). */
  readonly maxResultSizeChars: number;
  /** Words that help ToolSearch find a deferred tool. */
  readonly searchHint?: string;
  /** Hidden from the first request and found through ToolSearch when the pool is large. */
  readonly shouldDefer: boolean;
  /** True for tools that came from outside (MCP servers): PostToolUse hooks may rewrite their output. */
  readonly isExternal: boolean;
  /** Changes nothing but files in the workspace: the `acceptEdits` mode runs it without asking. */
  readonly editsFiles: boolean;
  /** Calling it again gives its result again, so micro-compaction may clear an old result of it. */
  readonly compactableResult: boolean;
  /**
   * A tool that needs a person before it runs (AskUserQuestion: `question`, ExitPlanMode: `plan`):
   * once permitted, the call waits durably as a pending interaction of this kind, and runs when it
   * is closed.
   */
  readonly interaction?: 'question' | 'plan';
  isEnabled(): boolean;
  isReadOnly(input: Input): boolean;
  isConcurrencySafe(input: Input): boolean;
  isDestructive(input: Input): boolean;
  interruptBehavior(): 'cancel' | 'block';
  validateInput(input: Input, ctx: ToolContext): Promise<ValidationResult>;
  /**
   * The tool's own say on permission. `passthrough` (the default) leaves the decision to the
   * rules and the session's mode; `allow`, `deny` and `ask` are taken as the tool's verdict.
   */
  checkPermissions(input: Input, ctx: ToolContext): Promise<PermissionCheck>;
  /** A shell tool's command split into the parts its permission rules match one by one (Bash). */
  commandParts?(input: Input): Promise<CommandParts | undefined>;
  call(input: Input, ctx: ToolContext): Promise<ToolResult<Output>>;
  mapToolResultToToolResultBlockParam(output: Output, toolUseId: string): ToolResultBlockParam;
}

type Required_ = 'name' | 'inputSchema' | 'description' | 'call' | 'mapToolResultToToolResultBlockParam';

export type ToolDefinition<Input, Output> = Pick<Tool<Input, Output>, Required_> & Partial<Omit<Tool<Input, Output>, Required_>>;

const TOOL_DEFAULTS = {
  aliases: [] as readonly string[],
  maxResultSizeChars: 100_000,
  shouldDefer: false,
  isExternal: false,
  editsFiles: false,
  compactableResult: false,
  isEnabled: () => true,
  isReadOnly: () => false,
  isConcurrencySafe: () => false,
  isDestructive: () => false,
  interruptBehavior: () => 'block' as const,
  validateInput: async (): Promise<ValidationResult> => ({ ok: true }),
  checkPermissions: async (): Promise<PermissionCheck> => ({ behavior: 'passthrough' }),
};

export function buildTool<Input, Output>(def: ToolDefinition<Input, Output>): Tool<Input, Output> {
  return { ...TOOL_DEFAULTS, ...def };
}

/** A tool's own failure the model can act on; its message becomes an error tool_result verbatim. */
export class ToolError extends Error {
  override name = 'ToolError';
}
