import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import { bearerAuth } from '../auth.ts';
import { withBodyCap } from '../body-limit.ts';
import { invocationDeadline } from '../invocation-deadline.ts';
import { createRouteApp } from '../route-app.ts';
import type { TokenAuth } from '../token-auth.ts';
import type { RemoteDeps } from '../remote/remote-sessions.ts';
import { a2aRoute, agentCardRoute } from '../remote/remote-openapi.ts';
import { A2A_PATH, AGENT_CARD_PATH, stratusAgentCard } from './a2a-card.ts';
import { StratusA2aHandler } from './a2a-handler.ts';

/** The largest JSON-RPC request /a2a takes: a long prompt, or a new task's seed files. */
export const MAX_A2A_BODY_BYTES = 4 * 1024 * 1024;

type JsonRpcAnswer = { jsonrpc: string; id: string | number | null; result?: unknown; error?: unknown };
type Answered = JsonRpcAnswer | AsyncGenerator<JsonRpcAnswer, void, undefined>;

/** The SDK's server side, loaded on the first A2A request only (as /mcp loads its SDK). */
async function loadA2aSdk() {
  const [server, compat, sdk] = await Promise.all([import('@a2a-js/sdk/server'), import('@a2a-js/sdk/compat/v0_3/server'), import('@a2a-js/sdk')]);
  return { server, compat, AgentCard: sdk.AgentCard };
}

/** The origin clients reached this API at: the agent card's interface URL is built on it. */
const originOf = (c: Context) => new URL(c.req.url).origin;

/**
 * A2A: the agent card at the well-known path (public, as the protocol wants: it names the
 * bearer scheme), and the JSON-RPC endpoint POST /a2a behind the same tokens and tenants as /v1.
 * v1.0 method names (`SendMessage`, `SendStreamingMessage`, `GetTask`, …) go to the SDK's
 * JsonRpcTransportHandler, v0.3's (`message/send`, `tasks/resubscribe`, …) to its compat
 * handler; both call the same StratusA2aHandler. Streaming methods answer as SSE.
 */
export function a2aRoutes(deps: RemoteDeps, tokens: TokenAuth, version: string) {
  const app = createRouteApp();
  app.openAPIRegistry.registerPath(agentCardRoute);
  app.openAPIRegistry.registerPath(a2aRoute);
  app.get(AGENT_CARD_PATH, async (c) => {
    const { AgentCard } = await loadA2aSdk();
    return c.json(AgentCard.toJSON(stratusAgentCard(originOf(c), version)) as object);
  });
  app.use(A2A_PATH, withBodyCap(bearerAuth(tokens), MAX_A2A_BODY_BYTES));
  app.post(A2A_PATH, async (c) => {
    const a2a = await loadA2aSdk();
    const call = { tenantId: c.get('tenantId'), deadlineAt: invocationDeadline(c) };
    const handler = new StratusA2aHandler(deps, call, stratusAgentCard(originOf(c), version));
    const body = await c.req.text();
    const request = requestOf(body);
    if (request === undefined) return c.json({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: the request body is not JSON.' } });
    const legacy = request.method?.includes('/') === true;
    const context = new a2a.server.ServerCallContext({ requestedVersion: legacy ? '0.3' : '1.0' });
    const transport = legacy ? new a2a.compat.LegacyJsonRpcTransportHandler(handler) : new a2a.server.JsonRpcTransportHandler(handler);
    const answered: Answered = await transport.handle(body, context);
    if (!(Symbol.asyncIterator in answered)) return c.json(answered);
    const mapError = legacy ? a2a.compat.LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError : a2a.server.JsonRpcTransportHandler.mapToJSONRPCError;
    return answerStream(c, answered, (err) => ({ jsonrpc: '2.0', id: request.id, error: mapError(err) }));
  });
  return app;
}

/** The request's JSON-RPC method and id, where the body is JSON naming them (the transport reports everything else). */
function requestOf(body: string): { method?: string; id: string | number | null } | undefined {
  try {
    const parsed = JSON.parse(body) as { method?: unknown; id?: unknown } | null;
    const id = typeof parsed?.id === 'string' || typeof parsed?.id === 'number' ? parsed.id : null;
    return { ...(typeof parsed?.method === 'string' ? { method: parsed.method } : {}), id };
  } catch {
    return undefined;
  }
}

/**
 * A streaming answer: a failure before the first event (an unknown task, a bad message) is a
 * plain JSON-RPC error; after it, each event is one SSE `data:` line of a JSON-RPC response. A
 * client that leaves stops getting events, but the stream is drained to its end: the turn is
 * still followed, and its end still pushed to the task's webhooks.
 */
async function answerStream(c: Context, stream: AsyncGenerator<JsonRpcAnswer, void, undefined>, errorOf: (err: unknown) => JsonRpcAnswer): Promise<Response> {
  let first: IteratorResult<JsonRpcAnswer, void>;
  try {
    first = await stream.next();
  } catch (err) {
    return c.json(errorOf(err));
  }
  return streamSSE(c, async (sse) => {
    let clientGone = false;
    sse.onAbort(() => {
      clientGone = true;
    });
    const send = async (message: { event?: string; data: string }) => {
      if (!clientGone) await sse.writeSSE(message).catch(() => (clientGone = true));
    };
    if (!first.done) await send({ data: JSON.stringify(first.value) });
    try {
      for await (const event of stream) await send({ data: JSON.stringify(event) });
    } catch (err) {
      await send({ event: 'error', data: JSON.stringify(errorOf(err)) });
    }
  });
}
