import { z } from 'zod';

/**
 * How tools that can wait (MCP tools above all) reach the model. `standard`: every tool's schema
 * is in every request. `tst`: deferred tools are left out until ToolSearch finds them. `tst-auto`:
 * as `tst`, but only when the deferred tools' schemas would take at least a tenth of the context
 * window (functions/tools/tool-search). Kept here, with the MCP settings, so the session settings
 * can name it without depending on the tools.
 */
export const toolSearchModeSchema = z.enum(['standard', 'tst', 'tst-auto']);
export type ToolSearchMode = z.infer<typeof toolSearchModeSchema>;

/** The text that replaces every header value the API shows. */
export const REDACTED = '[redacted]';

/**
 * One remote server, in the shape of Claude Code's `.mcp.json` (`http` = Streamable HTTP; `sse`
 * for older servers). Where it may point is the outbound policy's to say (functions/outbound):
 * MCP calls leave from the API side, so the sandbox's `allowedDomains` play no part.
 */
export const mcpServerConfigSchema = z.strictObject({
  type: z.enum(['http', 'sse']),
  url: z
    .string()
    .max(2_000)
    .url()
    .refine((u) => ['https:', 'http:'].includes(new URL(u).protocol), 'must be an https:// URL'),
  /** Sent with every request (e.g. `Authorization: Bearer …`); never shown by the API, in events or in the transcript. */
  headers: z.record(z.string().min(1).max(200), z.string().max(8_000)).optional(),
});
export type McpServerConfig = z.output<typeof mcpServerConfigSchema>;

/** Server names become part of tool names (`mcp__<name>__<tool>`), so they stay short and printable. */
export const mcpServersSchema = z
  .record(
    z
      .string()
      .min(1)
      .max(64)
      .regex(/^[^\s]/, 'must not start with a space'),
    mcpServerConfigSchema,
  )
  .refine((s) => Object.keys(s).length <= 20, 'at most 20 MCP servers per session');
export type McpServers = z.output<typeof mcpServersSchema>;

/**
 * Name normalisation (docs/tool-pipeline.md, "MCP servers"): every character outside `[a-zA-Z0-9_-]` becomes `_`, so a
 * server called "my server" gives tools named `mcp__my_server__…`.
 */
export function normalizeNameForMcp(name: string): string {
  return name.replace(/[^a-zA-Z0-9_-]/g, '_');
}

export function mcpToolName(server: string, tool: string): string {
  return `mcp__${normalizeNameForMcp(server)}__${normalizeNameForMcp(tool)}`;
}

/** What the API shows of the servers: everything but the header values. */
export function mcpServersView(
  servers: McpServers | undefined,
): Record<string, { type: McpServerConfig['type']; url: string; headers: Record<string, string> }> {
  const view: Record<string, { type: McpServerConfig['type']; url: string; headers: Record<string, string> }> = {};
  for (const [name, config] of Object.entries(servers ?? {})) {
    view[name] = { type: config.type, url: config.url, headers: Object.fromEntries(Object.keys(config.headers ?? {}).map((h) => [h, REDACTED])) };
  }
  return view;
}
