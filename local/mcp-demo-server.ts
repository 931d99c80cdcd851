import { createServer, type IncomingMessage, type Server } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

/** A 1×1 PNG. */
export const PIXEL_PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

export interface McpDemoServer {
  url: string;
  port: number;
  /** The Authorization header of every HTTP request received. */
  authorizations: (string | undefined)[];
  /** Tool names called, in order. */
  calls: string[];
  close(): Promise<void>;
}

export interface McpDemoServerOptions {
  /** How long the `slow` tool takes (default 10 s). */
  slowMs?: number;
  /**
   * Keep sessions (an `Mcp-Session-Id` from initialize, one server per session), as most real
   * servers do: a request naming a session this process does not hold gets 404 "Session not
   * found", which is what a client meets after the server restarted.
   */
  sessions?: boolean;
  /** Listen on this port (a restarted server takes its predecessor's); default any free one. */
  port?: number;
}

/**
 * A real MCP server over Streamable HTTP (the official SDK's server classes; stateless by
 * default: a new server and transport per request). Its tools cover what a client meets: text,
 * structured content, images and resources, an error answer, a slow call, a dropped connection
 * and a large result.
 */
export async function startMcpDemoServer(opts: McpDemoServerOptions = {}): Promise<McpDemoServer> {
  const authorizations: (string | undefined)[] = [];
  const calls: string[] = [];
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const http: Server = createServer(async (req, res) => {
    authorizations.push(req.headers.authorization);
    const body = await readJson(req);
    if (isCall(body, 'drop_connection')) {
      calls.push('drop_connection');
      req.socket.destroy();
      return;
    }
    const sessionId = req.headers['mcp-session-id'];
    if (opts.sessions && typeof sessionId === 'string') {
      const transport = sessions.get(sessionId);
      if (transport) return transport.handleRequest(req, res, body);
      res.writeHead(404, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }));
    }
    const server = buildServer(calls, opts.slowMs ?? 10_000);
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: opts.sessions ? () => randomUUID() : undefined,
      onsessioninitialized: (id) => void sessions.set(id, transport),
      enableJsonResponse: true,
    });
    if (!opts.sessions) {
      res.on('close', () => {
        void transport.close();
        void server.close();
      });
    }
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  });
  await new Promise<void>((resolve) => http.listen(opts.port ?? 0, '127.0.0.1', resolve));
  const port = (http.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    port,
    authorizations,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        for (const transport of sessions.values()) void transport.close();
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}

function buildServer(calls: string[], slowMs: number): McpServer {
  const server = new McpServer({ name: 'test-tracker', version: '1.0.0' });
  const track = (name: string) => calls.push(name);
  registerIssueTools(server, track);
  registerAwkwardTools(server, track, slowMs);
  return server;
}

/** The tracker's ordinary tools: reads with each kind of result, and a destructive one whose name needs normalising. */
function registerIssueTools(server: McpServer, track: (name: string) => void): void {
  server.registerTool(
    'get_issue',
    {
      description: 'Fetch one issue of the tracker by its number.',
      inputSchema: { number: z.number().int() },
      annotations: { readOnlyHint: true },
      _meta: { 'anthropic/searchHint': 'ticket bug tracker' },
    },
    async ({ number }) => (track('get_issue'), { content: [{ type: 'text', text: `Issue #${number}: the build is red` }] }),
  );
  server.registerTool(
    'count_issues',
    {
      description: 'Count open issues, as structured content.',
      inputSchema: {},
      annotations: { readOnlyHint: true },
    },
    async () => (track('count_issues'), { content: [{ type: 'text', text: 'ignored when structured' }], structuredContent: { open: 3, closed: 9 } }),
  );
  server.registerTool(
    'attachments',
    {
      description: 'Everything an issue has attached: a screenshot, the log and a link.',
      inputSchema: {},
    },
    async () => (
      track('attachments'),
      {
        content: [
          { type: 'image', data: PIXEL_PNG, mimeType: 'image/png' },
          { type: 'resource', resource: { uri: 'tracker://issues/7/log', mimeType: 'text/plain', text: 'line one' } },
          { type: 'resource_link', uri: 'tracker://issues/7', name: 'issue 7', description: 'the issue itself' },
        ],
      }
    ),
  );
  server.registerTool(
    'close issue!',
    {
      description: 'Close an issue (a name the client must normalise).',
      inputSchema: { number: z.number().int() },
      annotations: { destructiveHint: true },
    },
    async ({ number }) => (track('close issue!'), { content: [{ type: 'text', text: `closed #${number}` }] }),
  );
}

/** Tools that go wrong in each way a client must survive: an error, a slow call, a dropped connection, a huge result. */
function registerAwkwardTools(server: McpServer, track: (name: string) => void, slowMs: number): void {
  server.registerTool(
    'refuse',
    { description: 'Always answers with an error.', inputSchema: {} },
    async () => (track('refuse'), { isError: true, content: [{ type: 'text', text: 'the tracker is read-only today' }] }),
  );
  server.registerTool('slow', { description: 'Takes its time.', inputSchema: {} }, async () => {
    track('slow');
    await new Promise((r) => setTimeout(r, slowMs));
    return { content: [{ type: 'text', text: 'finally' }] };
  });
  server.registerTool('drop_connection', { description: 'The server goes away in the middle of the call.', inputSchema: {} }, async () => ({ content: [] }));
  server.registerTool(
    'export_all',
    { description: 'Every issue as one long text.', inputSchema: {} },
    async () => (track('export_all'), { content: [{ type: 'text', text: 'issue\n'.repeat(30_000) }] }),
  );
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  if (req.method !== 'POST') return undefined;
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? JSON.parse(text) : undefined;
}

function isCall(body: unknown, tool: string): boolean {
  const msg = body as { method?: string; params?: { name?: string } } | undefined;
  return msg?.method === 'tools/call' && msg.params?.name === tool;
}
