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
    StreamableHTTPError: http.StreamableHTTPError,
    ToolListChangedNotificationSchema: types.ToolListChangedNotificationSchema,
  };
}

export type McpSdk = Awaited<ReturnType<typeof loadMcpSdk>>;
export type McpClient = InstanceType<McpSdk['Client']>;

/**
 * Whether a request failed because the server no longer knows the session: Streamable HTTP
 * answers 404 to a request carrying a session id it does not hold (it restarted, or expired the
 * session). The client then starts a new session with a fresh initialize.
 */
export async function isSessionGone(err: unknown): Promise<boolean> {
  const sdk = await loadMcpSdk();
  return err instanceof sdk.StreamableHTTPError && err.code === 404;
}
