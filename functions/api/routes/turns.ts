import { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import { z } from 'zod';
import { startTurn } from '../../agent/turn.ts';
import type { TurnEvent } from '../../agent/turn-events.ts';
import type { Deps } from '../../deps/deps.ts';
import { errorMessage } from '../../shared/errors.ts';
import type { AuthVariables } from '../auth.ts';
import { parseJsonBody } from '../validate.ts';

const turnBody = z.strictObject({
  prompt: z.string().min(1, 'must not be empty').max(200_000),
});

/**
 * POST /v1/sessions/:id/turns runs one turn. With `Accept: text/event-stream` the turn's
 * events stream as SSE while it runs; otherwise the response is JSON once it ends. Either way
 * the turn runs to its end even if the client disconnects.
 */
export function turnRoutes(deps: Deps) {
  const app = new Hono<{ Variables: AuthVariables }>();

  app.post('/:id/turns', async (c) => {
    const body = await parseJsonBody(c, turnBody);
    const turn = await startTurn(deps, { sessionId: c.req.param('id'), tenantId: c.get('tenantId'), prompt: body.prompt });

    if ((c.req.header('accept') ?? '').includes('text/event-stream')) {
      return streamSSE(c, async (stream) => {
        let clientGone = false;
        stream.onAbort(() => {
          clientGone = true;
        });
        for await (const { seq, event } of turn.events.live.read()) {
          if (clientGone) continue;
          try {
            // The id lets a client resume from the event log with Last-Event-ID.
            await stream.writeSSE({ id: String(seq), event: event.type, data: JSON.stringify(event) });
          } catch (err) {
            clientGone = true;
            deps.log.info('SSE client went away; the turn continues', { turnId: turn.turnId, error: errorMessage(err) });
          }
        }
        await turn.done;
      });
    }

    const collected: TurnEvent[] = [];
    for await (const { event } of turn.events.live.read()) if (event.type !== 'text_delta') collected.push(event);
    await turn.done;
    const end = collected.find((e) => e.type === 'turn_end');
    return c.json({
      sessionId: turn.sessionId,
      turnId: turn.turnId,
      stopReason: end?.type === 'turn_end' ? end.stopReason : null,
      usage: end?.type === 'turn_end' ? end.usage : null,
      error: end?.type === 'turn_end' ? (end.error ?? null) : null,
      events: collected,
    });
  });

  return app;
}
