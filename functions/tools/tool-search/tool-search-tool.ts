import type { ToolResultBlockParam } from '@anthropic-ai/sdk/resources/messages';
import { z } from 'zod';
import { buildTool, type Tool } from '../tool.ts';
import { searchTools } from './search-tools.ts';
import { TOOL_SEARCH_TOOL_NAME } from './tool-search-mode.ts';

export const NO_MATCHES_TEXT = 'No matching deferred tools found';

// Not strict: an unknown parameter is dropped, not refused.
const inputSchema = z.object({
  query: z.string().describe('What to look for: "select:<name>[,<name>…]" picks tools by name; anything else is a keyword search.'),
  max_results: z.number().optional().default(5).describe('How many tools a keyword search returns at most (5 unless given)'),
});

export interface ToolSearchOutput {
  matches: string[];
  query: string;
  total_deferred_tools: number;
}

const DESCRIPTION = `Loads deferred tools so they can be called. A deferred tool is listed by name only (in the <available-deferred-tools> message) and has no parameter schema until it is loaded; calling it before that fails.

Give a query and the matching tools are loaded: from the next request on, their full definitions are part of the tool list, exactly like the tools defined at the start.

Queries:
- "select:mcp__github__create_issue,NotebookEdit": load these tools by exact name
- "issue github": keyword search over names, descriptions and search hints; the best max_results matches are loaded
- "+github issue": a word with "+" must match; the other words rank the results`;

/**
 * ToolSearch over one pool: `select:A,B` loads named tools (found among the deferred tools, then
 * the whole pool), anything else is a keyword search. The result is a list of `tool_reference`
 * blocks; the conversation that holds them is what later requests read their loaded tools from.
 */
export function createToolSearchTool(pool: {
  deferred: () => readonly Tool[];
  all: () => readonly Tool[];
}): Tool<z.output<typeof inputSchema>, ToolSearchOutput> {
  return buildTool({
    name: TOOL_SEARCH_TOOL_NAME,
    description: DESCRIPTION,
    inputSchema,
    isReadOnly: () => true,
    isConcurrencySafe: () => true,
    call: async ({ query, max_results }) => {
      const deferred = pool.deferred();
      const select = /^select:(.+)$/i.exec(query);
      if (select) {
        const found: string[] = [];
        for (const wanted of select[1]!
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)) {
          const tool = findTool(deferred, wanted) ?? findTool(pool.all(), wanted);
          if (tool && !found.includes(tool.name)) found.push(tool.name);
        }
        return { data: { matches: found, query, total_deferred_tools: deferred.length } };
      }
      return { data: { matches: searchTools(query, deferred, pool.all(), max_results), query, total_deferred_tools: deferred.length } };
    },
    mapToolResultToToolResultBlockParam: (output, toolUseId): ToolResultBlockParam => {
      if (output.matches.length === 0) return { type: 'tool_result', tool_use_id: toolUseId, content: NO_MATCHES_TEXT };
      return { type: 'tool_result', tool_use_id: toolUseId, content: output.matches.map((name) => ({ type: 'tool_reference' as const, tool_name: name })) };
    },
  });
}

function findTool(tools: readonly Tool[], name: string): Tool | undefined {
  return tools.find((t) => t.name === name || t.aliases.includes(name));
}
