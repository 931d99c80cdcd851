import type { StreamifyHandler } from 'aws-lambda';
import { streamHandle } from 'hono/aws-lambda';
import { handleAsyncEvent } from './async-events.ts';
import { createApp, createWebhookApp } from '../api/app.ts';
import type { Deps } from '../deps/deps.ts';
import { once } from './once.ts';
import { settledInvocation } from './invocation-end.ts';
import { WEBHOOK_ALIAS } from './webhook-alias.ts';

export type StreamingHandler = StreamifyHandler<unknown, void>;

/**
 * The API function's handler: Function URL requests (RESPONSE_STREAM) go to the same Hono app
 * the local stack serves; asynchronous self-invocations (events with a `kind`, e.g. a long
 * turn's `continue_turn`) go to the engine with this invocation's deadline. Deps are built
 * once per container, on the first event.
 */
export function createApiHandler(opts: { loadDeps: () => Promise<Deps>; consoleDir?: string }): StreamingHandler {
  const ready = once(opts.loadDeps);
  // Each app is built on its first request: a container behind the webhook alias (a version of
  // its own) never serves the whole API, and the API's containers never take the alias's requests.
  // hono types the result as a plain Handler, but it is the streamified (event, stream, context) one.
  const http = once(async () => streamHandle(createApp(await ready(), { consoleDir: opts.consoleDir })) as unknown as StreamingHandler);
  const webhookOnly = once(async () => streamHandle(createWebhookApp(await ready())) as unknown as StreamingHandler);

  return awslambda.streamifyResponse(async (event, responseStream, context) => {
    const deps = await ready();
    deps.startInvocation({ context, correlationId: correlationIdOf(event) });
    return settledInvocation(deps, async () => {
      if (!isAsyncEvent(event)) return (await (viaWebhookAlias(context) ? webhookOnly : http)())(event, responseStream, context);
      try {
        await handleAsyncEvent(deps, event, Date.now() + context.getRemainingTimeInMillis());
      } finally {
        responseStream.end();
      }
    });
  });
}

/** What ties this invocation's lines together: the Function URL request's id, or a continuation's turn id. */
function correlationIdOf(event: unknown): string | undefined {
  if (typeof event !== 'object' || event === null) return undefined;
  const e = event as { requestContext?: { requestId?: unknown }; turnId?: unknown };
  const id = e.requestContext?.requestId ?? e.turnId;
  return typeof id === 'string' ? id : undefined;
}

function viaWebhookAlias(context: { invokedFunctionArn?: string }): boolean {
  return (context.invokedFunctionArn ?? '').endsWith(`:${WEBHOOK_ALIAS}`);
}

/** Function URL events are HTTP requests; the harness's own asynchronous events carry a `kind`. */
function isAsyncEvent(event: unknown): boolean {
  return typeof event === 'object' && event !== null && 'kind' in event && !('requestContext' in event);
}
