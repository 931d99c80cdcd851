import type { Tool as ApiTool, MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { z } from 'zod';
import { isToolWhollyDenied } from '../permissions/rule-matching.ts';
import type { PermissionRule } from '../permissions/types.ts';
import { agentTool } from './agent/agent-tool.ts';
import { askUserQuestionTool } from './ask-user-question-tool.ts';
import { bashTool } from './bash-tool.ts';
import { editTool } from './edit-tool.ts';
import { enterPlanModeTool } from './plan-mode/enter-plan-mode-tool.ts';
import { exitPlanModeTool } from './plan-mode/exit-plan-mode-tool.ts';
import { globTool } from './glob-tool.ts';
import { grepTool } from './grep-tool.ts';
import { readTool } from './read-tool.ts';
import { skillTool } from './skill/skill-tool.ts';
import { taskOutputTool } from './task-output-tool.ts';
import { notebookEditTool } from './notebook-edit-tool.ts';
import { taskStopTool } from './task-stop-tool.ts';
import { todoWriteTool } from './todo-write-tool.ts';
import { webFetchTool } from './web/web-fetch-tool.ts';
import { webSearchTool } from './web/web-search-tool.ts';
import { writeTool } from './write-tool.ts';
import type { Tool } from './tool.ts';
import { deferredToolsMessage, discoveredToolNames } from './tool-search/discovered-tools.ts';
import { createToolSearchTool } from './tool-search/tool-search-tool.ts';
import { isDeferredTool, toolSearchEnabled, type ToolSearchSettings } from './tool-search/tool-search-mode.ts';

/** The built-in tools. This file only lists them (and assembles pools from them). */
export const BUILTIN_TOOLS: readonly Tool[] = [
  agentTool,
  askUserQuestionTool,
  bashTool,
  readTool,
  writeTool,
  editTool,
  enterPlanModeTool,
  exitPlanModeTool,
  notebookEditTool,
  globTool,
  grepTool,
  skillTool,
  taskOutputTool,
  taskStopTool,
  todoWriteTool,
  webFetchTool,
];

/** The built-ins of a deployment: WebSearch only where the operator turned it on and the provider has it (functions/model/web-search-offer.ts). */
export function builtinTools(options: { webSearch: boolean }): readonly Tool[] {
  return options.webSearch ? [...BUILTIN_TOOLS, webSearchTool] : BUILTIN_TOOLS;
}

export interface ToolRegistry {
  readonly tools: readonly Tool[];
  find(name: string): Tool | undefined;
  /**
   * The tools array for the Messages API, in a stable order (prompt-cache stability). With
   * deferred tools, only those the conversation's ToolSearch results name are included.
   */
  toApiTools(messages?: readonly MessageParam[]): ApiTool[];
  /** With deferred tools: the message that goes first in each request, naming them (byte-stable). */
  readonly deferredToolsMessage?: MessageParam;
}

export interface ToolPoolInput {
  builtins: readonly Tool[];
  /** Tools from outside (MCP servers), whose JSON schema arrives at run time. */
  external?: readonly Tool[];
  /** Deny rules that name a whole tool remove it before the model sees it. */
  rules?: readonly PermissionRule[];
  /** ToolSearch: whether deferred tools wait until the model searches for them (absent: never). */
  toolSearch?: ToolSearchSettings;
}

/**
 * The pool for one turn: enabled built-ins sorted by name as a contiguous prefix, then enabled
 * external tools sorted by name; a name clash keeps the built-in (an external server cannot
 * shadow a built-in); tools a deny rule removes entirely are left out. The prefix stays put
 * when external tools come and go, so the cached part of the prompt survives.
 */
export function assembleToolPool(input: ToolPoolInput): ToolRegistry {
  const rules = input.rules ?? [];
  const keep = (t: Tool) => !isToolWhollyDenied(rules, t.name) && safeEnabled(t);
  const builtins = input.builtins.filter(keep).sort(byName);
  const external = (input.external ?? []).filter(keep).sort(byName);
  const seen = new Set<string>();
  const tools: Tool[] = [];
  for (const tool of [...builtins, ...external]) {
    if (seen.has(tool.name)) continue;
    seen.add(tool.name);
    tools.push(tool);
  }
  return input.toolSearch ? withToolSearch(tools, input.toolSearch, rules) : registryOf(tools);
}

/**
 * The pool when deferred tools exist and the mode defers them: ToolSearch joins the built-in
 * prefix (sorted with them), deferred tools stay callable but their schemas are sent only once a
 * ToolSearch result in the conversation names them, marked `defer_loading` as the API expects.
 */
function withToolSearch(tools: Tool[], settings: ToolSearchSettings, rules: readonly PermissionRule[]): ToolRegistry {
  const deferred = tools.filter(isDeferredTool);
  if (isToolWhollyDenied(rules, 'ToolSearch') || !toolSearchEnabled(settings, deferred, toApiTool)) return registryOf(tools);
  const search = createToolSearchTool({ deferred: () => deferred, all: () => withSearch });
  const deferredNames = new Set(deferred.map((t) => t.name));
  const shown = tools.filter((t) => !deferredNames.has(t.name));
  const firstExternal = shown.findIndex((t) => t.isExternal);
  const builtins = [...(firstExternal < 0 ? shown : shown.slice(0, firstExternal)), search].sort(byName);
  const withSearch = [...builtins, ...(firstExternal < 0 ? [] : shown.slice(firstExternal)), ...deferred];
  const base = registryOf(withSearch);
  const shownApi = [...builtins, ...(firstExternal < 0 ? [] : shown.slice(firstExternal))].map(toApiTool);
  const byDiscovery = new Map<string, ApiTool[]>();
  return {
    ...base,
    deferredToolsMessage: deferredToolsMessage(deferred.map((t) => t.name)),
    toApiTools: (messages = []) => {
      const found = discoveredToolNames(messages);
      const loaded = deferred.filter((t) => found.has(t.name));
      const key = loaded.map((t) => t.name).join('\n');
      let api = byDiscovery.get(key);
      if (!api) {
        api = [...shownApi, ...loaded.map((t): ApiTool => ({ ...toApiTool(t), defer_loading: true }))];
        byDiscovery.set(key, api);
      }
      return api;
    },
  };
}

/** A registry over a fixed list (sorted by name); kept for callers that have no rules or external tools. */
export function createToolRegistry(tools: readonly Tool[] = BUILTIN_TOOLS): ToolRegistry {
  return assembleToolPool({ builtins: tools });
}

function registryOf(tools: Tool[]): ToolRegistry {
  const byNameMap = new Map<string, Tool>();
  for (const tool of tools) byNameMap.set(tool.name, tool);
  for (const tool of tools) for (const alias of tool.aliases) if (!byNameMap.has(alias)) byNameMap.set(alias, tool);
  let apiTools: ApiTool[] | undefined;
  return {
    tools,
    find: (name) => byNameMap.get(name),
    toApiTools: () => (apiTools ??= tools.map(toApiTool)),
  };
}

function toApiTool(tool: Tool): ApiTool {
  return {
    name: tool.name,
    description: tool.description,
    input_schema: (tool.inputJSONSchema ?? toInputSchema(tool.inputSchema)) as ApiTool['input_schema'],
  };
}

// Locale-independent so the order (and the prompt bytes) never depend on the host.
function byName(a: Tool, b: Tool): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

function safeEnabled(tool: Tool): boolean {
  try {
    return tool.isEnabled();
  } catch {
    return false;
  }
}

function toInputSchema(schema: z.ZodType): Record<string, unknown> {
  const json = z.toJSONSchema(schema, { io: 'input' }) as Record<string, unknown>;
  delete json.$schema;
  return json;
}
