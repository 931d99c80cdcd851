import type { ToolResultBlockParam } from '@anthropic-ai/sdk/resources/messages';
import { ToolError } from '../tool.ts';

type ResultContent = Exclude<ToolResultBlockParam['content'], undefined>;
type ResultBlock = Exclude<ResultContent, string>[number];

/** Image types the model reads; other blobs become a short note. */
const IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);

/** A `tools/call` answer as the SDK returns it (only what is read here). */
export interface McpCallResult {
  content?: unknown;
  structuredContent?: unknown;
  toolResult?: unknown;
  isError?: boolean;
}

/**
 * A `tools/call` answer as tool_result content (docs/tool-pipeline.md, "MCP servers"): the legacy
 * `toolResult` as text, else `structuredContent` as its JSON text, else each content block (text;
 * images as image blocks; embedded resources as `[Resource from <server> at <uri>] …`; resource
 * links as `[Resource link: <name>] <uri> (<description>)`). An `isError` answer throws with its
 * first text, so it becomes an error tool_result like any failed call.
 */
export function mapMcpResult(result: McpCallResult, server: string, tool: string): ResultContent {
  if (result.isError) {
    const first = Array.isArray(result.content) ? (result.content[0] as { text?: unknown } | undefined) : undefined;
    throw new ToolError(typeof first?.text === 'string' ? first.text : 'Unknown error');
  }
  if (result.toolResult !== undefined) return String(result.toolResult);
  if (result.structuredContent !== undefined) return JSON.stringify(result.structuredContent);
  if (Array.isArray(result.content)) return result.content.flatMap((block) => mapBlock(block as McpBlock, server));
  throw new ToolError(`MCP server "${server}" tool "${tool}": unexpected response format`);
}

interface McpBlock {
  type: string;
  text?: string;
  data?: string;
  mimeType?: string;
  uri?: string;
  name?: string;
  description?: string;
  resource?: { uri: string; text?: string; blob?: string; mimeType?: string };
}

function mapBlock(block: McpBlock, server: string): ResultBlock[] {
  switch (block.type) {
    case 'text':
      return [{ type: 'text', text: block.text ?? '' }];
    case 'image':
      return [imageBlock(block.data ?? '', block.mimeType)];
    case 'audio':
      return [{ type: 'text', text: binaryNote(`[Audio from ${server}] `, block.mimeType, block.data ?? '') }];
    case 'resource': {
      const resource = block.resource;
      if (!resource) return [];
      const prefix = `[Resource from ${server} at ${resource.uri}] `;
      if (resource.text !== undefined) return [{ type: 'text', text: `${prefix}${resource.text}` }];
      if (resource.blob === undefined) return [];
      if (IMAGE_TYPES.has(resource.mimeType ?? '')) return [{ type: 'text', text: prefix }, imageBlock(resource.blob, resource.mimeType)];
      return [{ type: 'text', text: binaryNote(prefix, resource.mimeType, resource.blob) }];
    }
    case 'resource_link': {
      const text = `[Resource link: ${block.name ?? ''}] ${block.uri ?? ''}`;
      return [{ type: 'text', text: block.description ? `${text} (${block.description})` : text }];
    }
    default:
      return [];
  }
}

function imageBlock(data: string, mimeType: string | undefined): ResultBlock {
  const subtype = mimeType?.split('/')[1] || 'png';
  const mediaType = IMAGE_TYPES.has(`image/${subtype}`) ? `image/${subtype}` : 'image/png';
  return { type: 'image', source: { type: 'base64', media_type: mediaType as 'image/png', data } };
}

function binaryNote(prefix: string, mimeType: string | undefined, base64: string): string {
  const bytes = Buffer.from(base64, 'base64').length;
  return `${prefix}Binary content (${mimeType || 'unknown type'}, ${bytes} bytes) is not shown to the model.`;
}
