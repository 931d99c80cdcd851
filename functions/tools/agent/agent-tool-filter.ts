import type { Tool } from '../tool.ts';
import type { AgentDefinition } from './agent-definitions.ts';

export const AGENT_TOOL_NAME = 'Agent';

/**
 * Layer 1: tools no sub-agent gets. Managing background tasks, plan mode and questions to the
 * user belong to the main agent, and `Agent` itself would let a sub-agent spawn without end
 * (a definition may allow it back with `Agent(...)` in its `tools`).
 */
export const ALL_AGENT_DISALLOWED_TOOLS: ReadonlySet<string> = new Set([
  'TaskOutput',
  'ExitPlanMode',
  'EnterPlanMode',
  'AskUserQuestion',
  'TaskStop',
  AGENT_TOOL_NAME,
]);

/** Custom agents are refused these on top (today the same set as every agent). */
export const CUSTOM_AGENT_DISALLOWED_TOOLS: ReadonlySet<string> = new Set(ALL_AGENT_DISALLOWED_TOOLS);

/** Layer 2: a background sub-agent has nobody to ask, so it gets only tools that need no UI. */
export const ASYNC_AGENT_ALLOWED_TOOLS: ReadonlySet<string> = new Set([
  'Read',
  'Write',
  'Edit',
  'Bash',
  'Glob',
  'Grep',
  'WebFetch',
  'WebSearch',
  'NotebookEdit',
  'Skill',
  'ToolSearch',
  'TodoWrite',
  'EnterWorktree',
  'ExitWorktree',
]);

export interface AgentToolFilterOptions {
  /** A background sub-agent (run_in_background). */
  isAsync: boolean;
}

/** Layers 1 and 2, plus the custom-agent set. External (MCP) tools always pass: the user chose them. */
export function filterToolsForAgent(tools: readonly Tool[], agent: Pick<AgentDefinition, 'source'>, opts: AgentToolFilterOptions): Tool[] {
  return tools.filter((tool) => {
    if (tool.isExternal) return true;
    if (ALL_AGENT_DISALLOWED_TOOLS.has(tool.name)) return false;
    if (agent.source !== 'built-in' && CUSTOM_AGENT_DISALLOWED_TOOLS.has(tool.name)) return false;
    if (opts.isAsync && !ASYNC_AGENT_ALLOWED_TOOLS.has(tool.name)) return false;
    return true;
  });
}

export interface ResolvedAgentTools {
  tools: Tool[];
  /** Entries of `tools` that named no available tool (reported, not fatal). */
  invalidToolSpecs: string[];
  /** From `Agent(a, b)`: the only types this sub-agent may spawn (undefined: any, when Agent is allowed at all). */
  allowedAgentTypes?: string[];
}

/**
 * Layer 3, the agent's own definition: filter, drop `disallowedTools`, then keep only the
 * `tools` list unless it is absent or `*`. `Agent(explore, plan)` in that list brings the
 * Agent tool back (a definition's explicit choice) limited to those agent types.
 */
export function resolveAgentTools(agent: AgentDefinition, available: readonly Tool[], opts: AgentToolFilterOptions): ResolvedAgentTools {
  const disallowed = new Set((agent.disallowedTools ?? []).map((spec) => parseToolSpec(spec).name));
  const filtered = filterToolsForAgent(available, agent, opts).filter((t) => !disallowed.has(t.name));
  if (!agent.tools || agent.tools.includes('*')) return { tools: filtered, invalidToolSpecs: [] };
  const byName = new Map(filtered.map((t) => [t.name, t]));
  const picked: Tool[] = [];
  const invalidToolSpecs: string[] = [];
  let allowedAgentTypes: string[] | undefined;
  for (const spec of agent.tools) {
    const { name, args } = parseToolSpec(spec);
    // Agent is removed by layer 1; a definition that names it explicitly gets it back.
    const tool = byName.get(name) ?? (name === AGENT_TOOL_NAME && !disallowed.has(name) && !opts.isAsync ? available.find((t) => t.name === name) : undefined);
    if (!tool) {
      invalidToolSpecs.push(spec);
      continue;
    }
    if (name === AGENT_TOOL_NAME && args) allowedAgentTypes = args;
    if (!picked.includes(tool)) picked.push(tool);
  }
  return { tools: picked, invalidToolSpecs, ...(allowedAgentTypes ? { allowedAgentTypes } : {}) };
}

/** `Name` or `Name(a, b)`. */
export function parseToolSpec(spec: string): { name: string; args?: string[] } {
  const match = /^\s*([^()\s]+)\s*(?:\(([^)]*)\))?\s*$/.exec(spec);
  if (!match) return { name: spec.trim() };
  const args = match[2]
    ?.split(',')
    .map((a) => a.trim())
    .filter((a) => a.length > 0);
  return { name: match[1]!, ...(args !== undefined ? { args } : {}) };
}
