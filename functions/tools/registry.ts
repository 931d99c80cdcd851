import type { Tool as ApiTool } from '@anthropic-ai/sdk/resources/messages';
import { z } from 'zod';
import { bashTool } from './bash-tool.ts';
import { editTool } from './edit-tool.ts';
import { globTool } from './glob-tool.ts';
import { grepTool } from './grep-tool.ts';
import { readTool } from './read-tool.ts';
import { taskOutputTool } from './task-output-tool.ts';
import { taskStopTool } from './task-stop-tool.ts';
import { writeTool } from './write-tool.ts';
import type { Tool } from './tool.ts';

/** The built-in tools. This file only lists them. */
export const BUILTIN_TOOLS: readonly Tool[] = [
  bashTool,
  readTool,
  writeTool,
  editTool,
  globTool,
  grepTool,
  taskOutputTool,
  taskStopTool,
];

export interface ToolRegistry {
  readonly tools: readonly Tool[];
  find(name: string): Tool | undefined;
  /** The tools array for the Messages API, in a stable order (prompt-cache stability). */
  toApiTools(): ApiTool[];
}

export function createToolRegistry(tools: readonly Tool[] = BUILTIN_TOOLS): ToolRegistry {
  const enabled = [...tools].filter((t) => t.isEnabled()).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const byName = new Map<string, Tool>();
  for (const tool of enabled) {
    byName.set(tool.name, tool);
    for (const alias of tool.aliases) if (!byName.has(alias)) byName.set(alias, tool);
  }
  const apiTools = enabled.map((tool) => ({
    name: tool.name,
    description: tool.description,
    input_schema: toInputSchema(tool.inputSchema),
  }));
  return {
    tools: enabled,
    find: (name) => byName.get(name),
    toApiTools: () => apiTools,
  };
}

function toInputSchema(schema: z.ZodType): ApiTool['input_schema'] {
  const json = z.toJSONSchema(schema, { io: 'input' }) as Record<string, unknown>;
  delete json.$schema;
  return json as ApiTool['input_schema'];
}
