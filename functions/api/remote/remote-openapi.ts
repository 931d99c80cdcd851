import { createRoute, z } from '@hono/zod-openapi';
import { errorResponses, json } from '../schemas/common.ts';

const tags = ['Remote agents'];

/** A JSON-RPC 2.0 request, as both adapters take it: the protocol's own SDKs define the methods' params. */
const jsonRpcRequest = z
  .object({
    jsonrpc: z.literal('2.0'),
    id: z.union([z.string(), z.number()]).optional().describe('Absent for a notification'),
    method: z.string().describe('The protocol method, e.g. `tools/call` (MCP) or `SendMessage` / `message/send` (A2A)'),
    params: z.looseObject({}).optional(),
  })
  .openapi('JsonRpcRequest');

const jsonRpcResponse = z
  .object({
    jsonrpc: z.literal('2.0'),
    id: z.union([z.string(), z.number(), z.null()]),
    result: z.unknown().optional(),
    error: z
      .object({ code: z.number().int(), message: z.string(), data: z.unknown().optional() })
      .optional()
      .describe('Bad input is an error here, never a 500'),
  })
  .openapi('JsonRpcResponse');

const jsonRpcAnswers = {
  200: {
    description:
      'A JSON-RPC response (errors included: an unknown task, invalid params); or, for a streaming method, Server-Sent Events whose `data` is each a JSON-RPC response',
    content: { 'application/json': { schema: jsonRpcResponse }, 'text/event-stream': { schema: jsonRpcResponse } },
  },
};

/** `POST /mcp`: declared for the document, the 405 lookup and the client; the MCP SDK's transport handles it. */
export const mcpRoute = createRoute({
  method: 'post',
  path: '/mcp',
  tags,
  summary: 'MCP (Streamable HTTP)',
  description:
    'Stratus as an MCP server, stateless (no `Mcp-Session-Id`): tools to create a session, run a prompt (with progress notifications), read its state, messages and diff, answer a permission and interrupt; resources for transcripts and files (docs/api.md, "MCP"). Any MCP client (`@modelcontextprotocol/sdk`, Claude Code) connects with the same bearer token as /v1.',
  request: { body: { content: { 'application/json': { schema: jsonRpcRequest } }, required: true } },
  responses: { ...jsonRpcAnswers, 202: { description: 'A notification or a response from the client, taken' }, ...errorResponses(413) },
});

/** `POST /a2a`: the A2A JSON-RPC endpoint (functions/api/a2a). */
export const a2aRoute = createRoute({
  method: 'post',
  path: '/a2a',
  tags,
  summary: 'A2A (JSON-RPC)',
  description:
    'Stratus as an A2A agent: a task is a session, each message a turn. v1.0 methods (`SendMessage`, `SendStreamingMessage`, `GetTask`, `ListTasks`, `CancelTask`, `SubscribeToTask`, `…TaskPushNotificationConfig`) and their v0.3 names (`message/send`, `message/stream`, `tasks/get`, `tasks/cancel`, `tasks/resubscribe`, `tasks/pushNotificationConfig/…`); the streaming ones answer SSE. The same bearer token as /v1 (docs/api.md, "A2A").',
  request: { body: { content: { 'application/json': { schema: jsonRpcRequest } }, required: true } },
  responses: { ...jsonRpcAnswers, ...errorResponses(413) },
});

/** `GET /.well-known/agent-card.json`: public, as A2A discovery wants; it names the bearer scheme the endpoint takes. */
export const agentCardRoute = createRoute({
  method: 'get',
  path: '/.well-known/agent-card.json',
  tags,
  summary: 'The A2A agent card (no token)',
  description: "Stratus's skills, the JSON-RPC interface at /a2a (protocol versions 1.0 and 0.3), streaming and push notifications, and the bearer scheme.",
  security: [],
  responses: { 200: json(z.looseObject({}).openapi('AgentCard'), 'The agent card (A2A v1.0 JSON)') },
});
