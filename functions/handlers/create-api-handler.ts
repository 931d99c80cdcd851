import type { StreamifyHandler } from 'aws-lambda';
import { streamHandle } from 'hono/aws-lambda';
import { handleAsyncEvent } from '../agent/async-events.ts';
import { createApp, createWebhookApp } from '../api/app.ts';
import type { Deps } from '../deps/deps.ts';
import { once } from './once.ts';
import { WEBHOOK_ALIAS } from './webhook-alias.ts';

export type StreamingHandler = StreamifyHandler<unknown, void>;

/**
 * The API function's handler: Function URL requests (RESPONSE_STREAM) go to the same Hono app
 * the local stack serves; asynchronous self-invocations (events with a `kind`, e.g. a long
 * turn's `continue_turn`) go to the engine with this invocation's deadline. Deps are built
 * once per container, on the first event.
 */
export function createApiHandler(opts: { loadDeps: () => Promise<Deps>; consoleDir?: string }): StreamingHandler {
  const ready = once(async () => {
    const deps = await opts.loadDeps();
    // hono types the result as a plain Handler, but it is the streamified (event, stream, context) one.
    return {
      deps,
      http: streamHandle(createApp(deps, { consoleDir: opts.consoleDir })) as unknown as StreamingHandler,
      webhookOnly: streamHandle(createWebhookApp(deps)) as unknown as StreamingHandler,
    };
  });

  return awslambda.streamifyResponse(async (event, responseStream, context) => {
    const { deps, http, webhookOnly } = await ready();
    deps.startInvocation({ context, correlationId: correlationIdOf(event) });
    if (!isAsyncEvent(event)) return (viaWebhookAlias(context) ? webhookOnly : http)(event, responseStream, context);
    try {
      await handleAsyncEvent(deps, event, Date.now() + context.getRemainingTimeInMillis());
    } finally {
      responseStream.end();
    }
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
