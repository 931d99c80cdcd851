/**
 * The official MCP SDK, loaded on first use only: most sessions have no MCP servers, and the API
 * function should not pay for the SDK's code at every cold start.
 */
export async function loadMcpSdk() {
  const [client, http, sse, types] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/client/sse.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]);
  return {
    Client: client.Client,
    StreamableHTTPClientTransport: http.StreamableHTTPClientTransport,
    SSEClientTransport: sse.SSEClientTransport,
    ToolListChangedNotificationSchema: types.ToolListChangedNotificationSchema,
  };
}

export type McpSdk = Awaited<ReturnType<typeof loadMcpSdk>>;
export type McpClient = InstanceType<McpSdk['Client']>;
