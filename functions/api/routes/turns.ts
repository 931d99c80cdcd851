import { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import { z } from 'zod';
import { startTurn } from '../../agent/turn.ts';
import type { TurnEvent } from '../../agent/turn-events.ts';
import type { Deps } from '../../deps/deps.ts';
import { errorMessage } from '../../shared/errors.ts';
import type { AuthVariables } from '../auth.ts';
import { invocationDeadline } from '../invocation-deadline.ts';
import { parseJsonBody } from '../validate.ts';
import { FOLLOW_POLL_MS } from './turn-events.ts';

const turnBody = z.strictObject({
  prompt: z.string().min(1, 'must not be empty').max(200_000),
});

/** A JSON caller following a continued turn stops this long before its own deadline. */
const FOLLOW_MARGIN_MS = 5_000;

/**
 * POST /v1/sessions/:id/turns runs one turn. With `Accept: text/event-stream` the turn's
 * events stream as SSE while it runs (ending with `turn_continued` if the turn moves to another
 * invocation; follow its `eventsUrl`); otherwise the response is JSON once the turn ends.
 * Either way the turn runs to its end even if the client disconnects.
 */
export function turnRoutes(deps: Deps) {
  const app = new Hono<{ Variables: AuthVariables }>();

  app.post('/:id/turns', async (c) => {
    const body = await parseJsonBody(c, turnBody);
    const deadline = invocationDeadline(c);
    const turn = await startTurn(deps, { sessionId: c.req.param('id'), tenantId: c.get('tenantId'), prompt: body.prompt, deadline });

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
    let lastSeq = -1;
    for await (const { seq, event } of turn.events.live.read()) {
      lastSeq = seq;
      if (event.type !== 'text_delta' && event.type !== 'turn_continued') collected.push(event);
    }
    await turn.done;
    // A turn that moved to another invocation: follow its event log while this one may.
    let end = collected.find((e) => e.type === 'turn_end');
    while (!end && (deadline === undefined || deadline - Date.now() > FOLLOW_MARGIN_MS)) {
      const more = await deps.events.listAfter(turn.sessionId, turn.turnId, lastSeq);
      for (const { seq, event } of more) {
        lastSeq = seq;
        if (event.type !== 'text_delta' && event.type !== 'turn_continued') collected.push(event);
      }
      end = collected.find((e) => e.type === 'turn_end');
      if (more.length === 0) await new Promise((r) => setTimeout(r, FOLLOW_POLL_MS));
    }
    const eventsUrl = `/v1/sessions/${turn.sessionId}/turns/${turn.turnId}/events`;
    if (!end) return c.json({ sessionId: turn.sessionId, turnId: turn.turnId, stopReason: 'checkpoint', usage: null, error: null, eventsUrl, events: collected }, 202);
    return c.json({
      sessionId: turn.sessionId,
      turnId: turn.turnId,
      stopReason: end.type === 'turn_end' ? end.stopReason : null,
      usage: end.type === 'turn_end' ? end.usage : null,
      error: end.type === 'turn_end' ? (end.error ?? null) : null,
      eventsUrl,
      events: collected,
    });
  });

  return app;
}
