import { bearerAuth } from '../auth.ts';
import { withBodyCap } from '../body-limit.ts';
import { invocationDeadline } from '../invocation-deadline.ts';
import { createRouteApp } from '../route-app.ts';
import type { TokenAuth } from '../token-auth.ts';
import type { RemoteDeps } from '../remote/remote-sessions.ts';
import { mcpRoute } from '../remote/remote-openapi.ts';
import type { McpCall } from './mcp-turns.ts';
import { registerMcpResources } from './mcp-resources.ts';
import { registerMcpTools, type ProgressExtra } from './mcp-tools.ts';

/** The largest JSON-RPC message /mcp takes: a prompt of 200,000 characters, or seed files. */
export const MAX_MCP_BODY_BYTES = 4 * 1024 * 1024;

/** The name and version Stratus gives in MCP's initialize answer. */
const SERVER_INFO = { name: 'stratus', version: '1.0.0' };

/** The SDK's server side, loaded on the first /mcp request only (as the client side is: functions/tools/mcp/mcp-sdk.ts). */
async function loadMcpServerSdk() {
  const [mcp, http] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/mcp.js'),
    import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'),
  ]);
  return { McpServer: mcp.McpServer, ResourceTemplate: mcp.ResourceTemplate, Transport: http.WebStandardStreamableHTTPServerTransport };
}

/**
 * `/mcp`: the MCP Streamable HTTP endpoint, behind the same bearer tokens and tenants as /v1.
 * Stateless (no MCP session id): each request gets its own server and transport, so any
 * instance (any Lambda invocation) answers any request; everything lasting is in the stores. A
 * tools/call answers as SSE, carrying progress notifications while a turn runs.
 */
export function mcpRoutes(deps: RemoteDeps, tokens: TokenAuth) {
  const app = createRouteApp();
  app.openAPIRegistry.registerPath(mcpRoute);
  app.use('/mcp', withBodyCap(bearerAuth(tokens), MAX_MCP_BODY_BYTES));
  app.all('/mcp', async (c) => {
    const sdk = await loadMcpServerSdk();
    const tenantId = c.get('tenantId');
    const deadlineAt = invocationDeadline(c);
    const server = new sdk.McpServer(SERVER_INFO, { capabilities: { tools: {}, resources: {} } });
    const callOf = (extra: ProgressExtra): McpCall => ({ tenantId, deadlineAt, progress: progressOf(extra) });
    registerMcpTools(server, deps, callOf);
    registerMcpResources(server, deps, () => tenantId, sdk.ResourceTemplate);
    const transport = new sdk.Transport({ sessionIdGenerator: undefined, maxRequestBodySize: MAX_MCP_BODY_BYTES });
    await server.connect(transport);
    return transport.handleRequest(c.req.raw);
  });
  return app;
}

/** Progress notifications for the request's progress token; none when the client gave none. */
function progressOf(extra: ProgressExtra): (message: string) => Promise<void> {
  const token = extra._meta?.progressToken;
  let step = 0;
  return async (message) => {
    if (token === undefined) return;
    step += 1;
    await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: step, message } }).catch(() => undefined);
  };
}
