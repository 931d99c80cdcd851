import type { StreamifyHandler } from 'aws-lambda';
import { streamHandle } from 'hono/aws-lambda';
import { createApp } from '../api/app.ts';
import type { Deps } from '../deps/deps.ts';
import { isContinueTurnEvent, runContinueTurn, type ContinueTurn } from './continue-turn.ts';
import { once } from './once.ts';

export type StreamingHandler = StreamifyHandler<unknown, void>;

/**
 * The API function's handler: Function URL requests (RESPONSE_STREAM) go to the same Hono app
 * the local stack serves; `continue_turn` events (asynchronous self-invocations of a long
 * turn) go to `continueTurn`. Deps are built once per container, on the first event.
 */
export function createApiHandler(opts: { loadDeps: () => Promise<Deps>; continueTurn: ContinueTurn }): StreamingHandler {
  const ready = once(async () => {
    const deps = await opts.loadDeps();
    // hono types the result as a plain Handler, but it is the streamified (event, stream, context) one.
    return { deps, http: streamHandle(createApp(deps)) as unknown as StreamingHandler };
  });

  return awslambda.streamifyResponse(async (event, responseStream, context) => {
    const { deps, http } = await ready();
    if (!isContinueTurnEvent(event)) return http(event, responseStream, context);
    try {
      await runContinueTurn(deps, event, { remainingTimeMs: () => context.getRemainingTimeInMillis() }, opts.continueTurn);
    } finally {
      responseStream.end();
    }
  });
}
