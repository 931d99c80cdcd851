import type { ToolResultBlockParam } from '@anthropic-ai/sdk/resources/messages';
import { z } from 'zod';
import { buildTool, type Tool, type ToolContext } from './tool.ts';

export interface ExternalToolSpec {
  /** The name the model sees, e.g. `mcp__github__create_issue`. */
  name: string;
  description: string;
  /** The JSON schema as the server sent it; sent to the model unchanged and used to validate input. */
  inputJSONSchema: Record<string, unknown>;
  /** Annotations the server may give; absent means the fail-closed default. */
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  /** Words that help ToolSearch find the tool (the server's `anthropic/searchHint`). */
  searchHint?: string;
  /** Never deferred behind ToolSearch (the server's `anthropic/alwaysLoad`); external tools are deferred otherwise. */
  alwaysLoad?: boolean;
  call(input: Record<string, unknown>, ctx: ToolContext): Promise<ToolResultBlockParam['content']>;
}

/**
 * A tool whose schema arrives at run time (an MCP server's tool). Input is validated against
 * the server's JSON schema; when that schema cannot be converted, any object is accepted and
 * the server does the checking.
 */
export function createExternalTool(spec: ExternalToolSpec): Tool<Record<string, unknown>, ToolResultBlockParam['content']> {
  return buildTool({
    name: spec.name,
    description: spec.description,
    inputSchema: schemaFrom(spec.inputJSONSchema),
    inputJSONSchema: spec.inputJSONSchema,
    isExternal: true,
    isReadOnly: () => spec.readOnlyHint === true,
    isConcurrencySafe: () => spec.readOnlyHint === true,
    isDestructive: () => spec.destructiveHint === true,
    shouldDefer: spec.alwaysLoad !== true,
    ...(spec.searchHint ? { searchHint: spec.searchHint } : {}),
    call: async (input, ctx) => ({ data: await spec.call(input, ctx) }),
    mapToolResultToToolResultBlockParam: (content, toolUseId) => ({ type: 'tool_result', tool_use_id: toolUseId, content }),
  });
}

function schemaFrom(json: Record<string, unknown>): z.ZodType<Record<string, unknown>> {
  try {
    return z.fromJSONSchema(json as Parameters<typeof z.fromJSONSchema>[0]) as z.ZodType<Record<string, unknown>>;
  } catch {
    return z.record(z.string(), z.unknown());
  }
}
