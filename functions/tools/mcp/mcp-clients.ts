import { createHash } from 'node:crypto';
import type { Logger } from '../../shared/logger.ts';
import { createExternalTool, type ExternalToolSpec } from '../external-tool.ts';
import { ToolError, type Tool, type ToolContext } from '../tool.ts';
import { mcpToolName, type McpServerConfig, type McpServers } from '../../session-settings/mcp-config.ts';
import type { OutboundFetch } from '../../outbound/outbound-fetch.ts';
import type { OutboundPolicy } from '../../outbound/outbound-policy.ts';
import { createMcpFetch, mcpFailureText } from './mcp-fetch.ts';
import { mapMcpResult, type McpCallResult } from './mcp-result.ts';
import { isSessionGone, loadMcpSdk, type McpClient } from './mcp-sdk.ts';

/** Tool descriptions are cut here: a server cannot fill the prompt with one tool's text. */
export const MAX_MCP_DESCRIPTION_LENGTH = 2_048;

export interface McpOptions {
  /** A `tools/call` that takes longer fails with a timeout text (docs/tool-pipeline.md, "MCP servers"). */
  toolTimeoutMs: number;
  /** Connecting (initialize) and listing tools. */
  connectTimeoutMs: number;
  /** Connections kept per instance; the oldest is closed beyond this. */
  maxConnections?: number;
}

/** The sessions' MCP servers as seen from this instance (Lambda container, local process). */
export interface McpClients {
  /**
   * The tools of a session's servers, named `mcp__<server>__<tool>`. Connected and listed once
   * per instance and server config, listed again after the server's `tools/list_changed`; a
   * fresh instance lists again (one initialize + tools/list per server, in parallel). A server
   * that cannot be reached, or that the outbound policy refuses, is logged and contributes no tools.
   */
  toolsFor(session: { sessionId: string; servers: McpServers }, log: Logger): Promise<Tool[]>;
  close(): Promise<void>;
}

interface ListedTool {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  annotations?: { readOnlyHint?: boolean; destructiveHint?: boolean };
  _meta?: Record<string, unknown>;
}

interface Connection {
  client: McpClient;
  tools?: Promise<ListedTool[]>;
}

/** Every request to an MCP server goes through `outbound` (resolved, checked and pinned each time). */
export function createMcpClients(options: McpOptions, outbound: OutboundPolicy): McpClients {
  const cache = createConnectionCache(options, createMcpFetch(outbound));
  return {
    async toolsFor(session, log) {
      const lists = await Promise.all(
        Object.entries(session.servers).map(async ([name, config]) => {
          const refusal = outbound.refusalOf(config.url);
          if (refusal) {
            log.warn('MCP server refused by the outbound policy; its tools are left out', { server: name, reason: refusal });
            return [];
          }
          try {
            return await serverTools(cache, options, connectionKey(session.sessionId, name, config), name, config);
          } catch (err) {
            log.warn('MCP server failed; its tools are left out', { server: name, error: mcpFailureText(err) });
            return [];
          }
        }),
      );
      return lists.flat();
    },
    close: async () => cache.closeAll(),
  };
}

interface ConnectionCache {
  connection(key: string, name: string, config: McpServerConfig): Promise<Connection>;
  drop(key: string): void;
  closeAll(): void;
}

/** Open connections by key; a failed or closed one is forgotten, the oldest closed beyond the limit. */
function createConnectionCache(options: McpOptions, fetch: OutboundFetch): ConnectionCache {
  const connections = new Map<string, Promise<Connection>>();
  const maxConnections = options.maxConnections ?? 200;
  const drop = (key: string) => {
    const conn = connections.get(key);
    connections.delete(key);
    void conn?.then((c) => c.client.close()).catch(() => undefined);
  };
  return {
    connection(key, name, config) {
      let conn = connections.get(key);
      if (!conn) {
        conn = connect({ name, config, fetch }, options.connectTimeoutMs, () => connections.delete(key));
        connections.set(key, conn);
        conn.catch(() => connections.delete(key));
        if (connections.size > maxConnections) drop(connections.keys().next().value!);
      }
      return conn;
    },
    drop,
    closeAll: () => [...connections.keys()].forEach(drop),
  };
}

/** One server's tools, listed once per connection (again after `tools/list_changed`). */
async function serverTools(cache: ConnectionCache, options: McpOptions, key: string, name: string, config: McpServerConfig): Promise<Tool[]> {
  const conn = await cache.connection(key, name, config);
  conn.tools ??= withTimeout(
    listTools(conn.client),
    options.connectTimeoutMs,
    `MCP server "${name}" did not list its tools within ${options.connectTimeoutMs} ms`,
  );
  const listed = await conn.tools.catch((err: unknown) => {
    conn.tools = undefined;
    throw err;
  });
  const call = async (input: Record<string, unknown>, ctx: ToolContext, tool: ListedTool) => {
    const current = await cache.connection(key, name, config);
    return mapMcpResult(await callTool(current.client, name, tool.name, input, ctx, options.toolTimeoutMs), name, tool.name);
  };
  return listed.map((tool) =>
    mcpTool(name, tool, async (input, ctx) => {
      try {
        return await call(input, ctx, tool).catch(async (err: unknown) => {
          // The server forgot the session (it restarted): a new initialize, then the call once more, as the protocol expects.
          if (!(await isSessionGone(err))) throw err;
          cache.drop(key);
          return call(input, ctx, tool);
        });
      } catch (err) {
        if (err instanceof ToolError || ctx.signal.aborted) throw err;
        // A broken connection is not kept: the next call connects again.
        cache.drop(key);
        throw new ToolError(`MCP server "${name}" tool "${tool.name}" failed: ${mcpFailureText(err)}`);
      }
    }),
  );
}

/** Header values are part of the key (a changed token reconnects) without being kept as text. */
function connectionKey(sessionId: string, name: string, config: McpServerConfig): string {
  return `${sessionId}\u0000${name}\u0000${createHash('sha256').update(JSON.stringify(config)).digest('hex')}`;
}

async function connect(
  { name, config, fetch }: { name: string; config: McpServerConfig; fetch: OutboundFetch },
  timeoutMs: number,
  onClose: () => void,
): Promise<Connection> {
  const sdk = await loadMcpSdk();
  const client = new sdk.Client({ name: 'stratus', version: '1.0.0' }, { capabilities: {} });
  const url = new URL(config.url);
  const requestInit = { headers: { ...config.headers } };
  const transport =
    config.type === 'http'
      ? new sdk.StreamableHTTPClientTransport(url, { requestInit, fetch })
      : new sdk.SSEClientTransport(url, {
          requestInit,
          fetch,
          eventSourceInit: {
            fetch: (input, init) => fetch(input, { ...init, headers: { ...Object.fromEntries(new Headers(init?.headers).entries()), ...config.headers } }),
          },
        });
  const conn: Connection = { client };
  client.setNotificationHandler(sdk.ToolListChangedNotificationSchema, async () => {
    conn.tools = undefined;
  });
  client.onclose = onClose;
  try {
    await withTimeout(client.connect(transport, { timeout: timeoutMs }), timeoutMs, `MCP server "${name}" did not answer within ${timeoutMs} ms`);
  } catch (err) {
    await client.close().catch(() => undefined);
    throw err;
  }
  return conn;
}

async function listTools(client: McpClient): Promise<ListedTool[]> {
  if (!client.getServerCapabilities()?.tools) return [];
  const tools: ListedTool[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor ? { cursor } : undefined);
    tools.push(...(page.tools as ListedTool[]));
    cursor = page.nextCursor;
  } while (cursor && tools.length < 10_000);
  return tools;
}

async function callTool(
  client: McpClient,
  server: string,
  tool: string,
  input: Record<string, unknown>,
  ctx: ToolContext,
  timeoutMs: number,
): Promise<McpCallResult> {
  const abort = new AbortController();
  const onAbort = () => abort.abort(ctx.signal.reason);
  ctx.signal.addEventListener('abort', onAbort, { once: true });
  const text = `MCP server "${server}" tool "${tool}" timed out after ${Math.floor(timeoutMs / 1000)}s`;
  try {
    const call = client.callTool({ name: tool, arguments: input, _meta: { 'stratus/toolUseId': ctx.toolUseId } }, undefined, {
      signal: abort.signal,
      timeout: timeoutMs + 1_000,
    });
    return (await withTimeout(call, timeoutMs, text, () => abort.abort(new Error(text)))) as McpCallResult;
  } finally {
    ctx.signal.removeEventListener('abort', onAbort);
  }
}

function mcpTool(server: string, tool: ListedTool, call: ExternalToolSpec['call']): Tool {
  const description = tool.description ?? '';
  const hint = tool._meta?.['anthropic/searchHint'];
  return createExternalTool({
    name: mcpToolName(server, tool.name),
    description: description.length > MAX_MCP_DESCRIPTION_LENGTH ? `${description.slice(0, MAX_MCP_DESCRIPTION_LENGTH)}… [truncated]` : description,
    inputJSONSchema: tool.inputSchema,
    readOnlyHint: tool.annotations?.readOnlyHint,
    destructiveHint: tool.annotations?.destructiveHint,
    searchHint: typeof hint === 'string' ? hint.replace(/\s+/g, ' ').trim() || undefined : undefined,
    alwaysLoad: tool._meta?.['anthropic/alwaysLoad'] === true,
    call,
  });
}

/** Rejects with a ToolError carrying `text` when `promise` takes longer than `ms`. */
function withTimeout<T>(promise: Promise<T>, ms: number, text: string, onTimeout?: () => void): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      onTimeout?.();
      reject(new ToolError(text));
    }, ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
