import type { ToolSearchMode } from '../../session-settings/mcp-config.ts';
import type { Tool } from '../tool.ts';

export type { ToolSearchMode };

export const TOOL_SEARCH_TOOL_NAME = 'ToolSearch';

/** The auto threshold: a tenth of the context window (docs/tool-pipeline.md, "ToolSearch"). */
export const AUTO_THRESHOLD_PERCENT = 10;
/** Characters per token of the estimate the auto mode measures with. */
export const CHARS_PER_TOKEN = 2.5;

/** Models that cannot read `tool_reference` blocks. */
const UNSUPPORTED_MODELS = ['haiku'];

export interface ToolSearchSettings {
  mode: ToolSearchMode;
  model: string;
  contextWindow: number;
}

/** Which tools wait behind ToolSearch: MCP (external) tools unless they ask to always load, and built-ins that set `shouldDefer`. */
export function isDeferredTool(tool: Tool): boolean {
  if (tool.name === TOOL_SEARCH_TOOL_NAME) return false;
  return tool.shouldDefer;
}

/** Whether this pool defers its deferred tools (docs/tool-pipeline.md, "ToolSearch"). */
export function toolSearchEnabled(settings: ToolSearchSettings, deferred: readonly Tool[], toApi: (tool: Tool) => { input_schema: unknown }): boolean {
  if (settings.mode === 'standard' || deferred.length === 0) return false;
  const model = settings.model.toLowerCase();
  if (UNSUPPORTED_MODELS.some((m) => model.includes(m))) return false;
  if (settings.mode === 'tst') return true;
  // Counted in characters, not with the API's token counting: the character
  // estimate is used here, so the decision costs no request and is the same on every instance.
  // Measured over the name, description and JSON schema of each deferred tool.
  const chars = deferred.reduce((n, tool) => n + tool.name.length + tool.description.length + JSON.stringify(toApi(tool).input_schema).length, 0);
  return chars >= autoThresholdChars(settings.contextWindow);
}

export function autoThresholdChars(contextWindow: number): number {
  return Math.floor(Math.floor(contextWindow * (AUTO_THRESHOLD_PERCENT / 100)) * CHARS_PER_TOKEN);
}
