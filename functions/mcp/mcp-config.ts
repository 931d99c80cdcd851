import { z } from 'zod';
import { checkHostPort, parseAllowList } from '../../sandbox-runner/isolation/network-allow-list.ts';
import { UserError } from '../shared/errors.ts';

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

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

/** One remote server, in the shape of Claude Code's `.mcp.json` (`http` = Streamable HTTP; `sse` for older servers). */
export const mcpServerConfigSchema = z.strictObject({
  type: z.enum(['http', 'sse']),
  url: z
    .string()
    .max(2_000)
    .url()
    .refine((u) => {
      const url = new URL(u);
      return url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname));
    }, 'must be an https:// URL'),
  /** Sent with every request (e.g. `Authorization: Bearer …`); never shown by the API, in events or in the transcript. */
  headers: z.record(z.string().min(1).max(200), z.string().max(8_000)).optional(),
});
export type McpServerConfig = z.output<typeof mcpServerConfigSchema>;

/** Server names become part of tool names (`mcp__<name>__<tool>`), so they stay short and printable. */
export const mcpServersSchema = z.record(z.string().min(1).max(64).regex(/^[^\s]/, 'must not start with a space'), mcpServerConfigSchema).refine((s) => Object.keys(s).length <= 20, 'at most 20 MCP servers per session');
export type McpServers = z.output<typeof mcpServersSchema>;

/**
 * The reference's name normalisation: every character outside `[a-zA-Z0-9_-]` becomes `_`, so a
 * server called "my server" gives tools named `mcp__my_server__…`.
 */
export function normalizeNameForMcp(name: string): string {
  return name.replace(/[^a-zA-Z0-9_-]/g, '_');
}

export function mcpToolName(server: string, tool: string): string {
  return `mcp__${normalizeNameForMcp(server)}__${normalizeNameForMcp(tool)}`;
}

/** What the API shows of the servers: everything but the header values. */
export function mcpServersView(servers: McpServers | undefined): Record<string, { type: McpServerConfig['type']; url: string; headers: Record<string, string> }> {
  const view: Record<string, { type: McpServerConfig['type']; url: string; headers: Record<string, string> }> = {};
  for (const [name, config] of Object.entries(servers ?? {})) {
    view[name] = { type: config.type, url: config.url, headers: Object.fromEntries(Object.keys(config.headers ?? {}).map((h) => [h, REDACTED])) };
  }
  return view;
}

/**
 * MCP calls leave from the harness, so they obey the session's network allow-list like the
 * sandbox's commands: a server's host (and port) must be on `allowedDomains`. Null when allowed,
 * else the reason.
 */
export function mcpServerRefusal(config: McpServerConfig, allowedDomains: readonly string[] | undefined): string | null {
  const url = new URL(config.url);
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  const decision = checkHostPort(url.hostname.replace(/^\[|\]$/g, ''), port, parseAllowList(allowedDomains ?? []));
  if (decision.allowed) return null;
  return `${url.hostname}:${port} is not in the session's allowedDomains`;
}

/** 400 when a server is not reachable under the settings' allow-list (checked on create and PATCH). */
export function assertMcpServersAllowed(servers: McpServers | undefined, allowedDomains: readonly string[] | undefined): void {
  const refused = Object.entries(servers ?? {}).flatMap(([name, config]) => {
    const reason = mcpServerRefusal(config, allowedDomains);
    return reason ? [`"${name}" (${reason})`] : [];
  });
  if (refused.length > 0) throw new UserError(`Invalid "settings.mcpServers": MCP calls obey the network allow-list; add the server's host to "settings.allowedDomains": ${refused.join(', ')}.`);
}
