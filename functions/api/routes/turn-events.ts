import { createRoute, z } from '@hono/zod-openapi';
import { streamSSE } from 'hono/streaming';
import { endTurnIfDead } from '../../agent/crashed-turn.ts';
import { followTurn } from '../../agent/follow-turn.ts';
import type { Deps, DepsOf } from '../../deps/deps.ts';
import { NotFoundError } from '../../shared/errors.ts';
import { isId, showId } from '../../shared/ids.ts';
import type { StoredTurnEvent } from '../../stores/event-store.ts';
import { createRouteApp, untypedResponse } from '../route-app.ts';
import { errorResponses } from '../schemas/common.ts';
import { SSE_DESCRIPTION, sseContent, turnEventSchema } from '../schemas/turn-events.ts';

const followQuery = z.object({
  after: z.coerce.number().int().min(-1).optional().describe('Events after this id (`-1`: from the start); `Last-Event-ID` does the same for SSE'),
  limit: z.coerce.number().int().min(1).max(1000).default(500).describe('Events per JSON page (1–1000)'),
});

const eventsPageSchema = z
  .object({
    events: z.array(z.object({ id: z.number().int().describe("The event's number in its turn (the SSE id)"), event: turnEventSchema })),
    next: z.number().int().describe('Pass as `after` for the next page'),
    done: z.boolean().describe('The page holds the `turn_end`'),
  })
  .openapi('TurnEventsPage');

const follow = createRoute({
  method: 'get',
  path: '/{id}/turns/{turnId}/events',
  tags: ['Turns'],
  summary: "A turn's events from the durable log",
  description:
    'With `Accept: text/event-stream`: follows the turn until `turn_end`, resuming after `Last-Event-ID` (or `?after=`) — how a client reconnects, and how it keeps watching a turn that continued in another invocation. Otherwise one JSON page. A turn whose process died ends with a `crashed` turn_end.',
  request: {
    params: z.object({ id: z.string().describe('Session id'), turnId: z.string().describe('Turn id (`turn_…`)') }),
    query: followQuery,
    headers: z.object({ 'last-event-id': z.string().optional().describe('SSE: resume after this event id') }),
  },
  responses: {
    200: { description: `One JSON page, or the SSE stream.\n\n${SSE_DESCRIPTION}`, content: { 'application/json': { schema: eventsPageSchema }, ...sseContent } },
    ...errorResponses(400, 404),
  },
});

/**
 * GET /v1/sessions/:id/turns/:turnId/events — a turn's events from the durable log.
 * With `Accept: text/event-stream` it follows the turn until `turn_end`, resuming after
 * `Last-Event-ID` (or `?after=`), which is how a client reconnects, and how it keeps watching a
 * turn that continued in another invocation. Without it, one JSON page (`done` once it holds the
 * turn_end). Either way a turn whose process died ends with a `crashed` turn_end.
 */
export function turnEventRoutes(deps: Pick<Deps, 'sessions' | 'events'> & DepsOf<typeof endTurnIfDead> & DepsOf<typeof followTurn>) {
  const app = createRouteApp();

  app.openapi(follow, async (c) => {
    const { id: sessionId, turnId } = c.req.valid('param');
    const q = c.req.valid('query');
    await deps.sessions.getForTenant(sessionId, c.get('tenantId'));
    if (!isId('turn', turnId)) throw new NotFoundError(`Turn ${showId(turnId)} not found in session ${sessionId}.`);
    const lastEventId = c.req.header('last-event-id');
    const after = q.after ?? (lastEventId !== undefined && /^\d+$/.test(lastEventId) ? Number(lastEventId) : -1);

    if (!(c.req.header('accept') ?? '').includes('text/event-stream')) {
      let events = await deps.events.listAfter(sessionId, turnId, after, q.limit);
      // At the end of the log without a turn_end: if the turn died, end its log now, so a
      // poller is never left waiting on a process that is gone.
      if (events.length < q.limit && !events.some((e) => e.event.type === 'turn_end') && (await endTurnIfDead(deps, sessionId, turnId))) {
        events = await deps.events.listAfter(sessionId, turnId, after, q.limit);
      }
      const done = events.some((e) => e.event.type === 'turn_end');
      return c.json({ events: events.map(view), next: events.at(-1)?.seq ?? after, done }, 200);
    }

    return untypedResponse(
      streamSSE(c, async (stream) => {
        let open = true;
        stream.onAbort(() => {
          open = false;
        });
        for await (const e of followTurn(deps, sessionId, turnId, after, () => open, { limit: q.limit, sleep: (ms) => stream.sleep(ms) })) {
          await stream.writeSSE({ id: String(e.seq), event: e.event.type, data: JSON.stringify(e.event) });
        }
      }),
    );
  });

  return app;
}

/** `id` is the event's number in its turn (the SSE id); `event` is what SSE sends as data. */
function view(e: StoredTurnEvent) {
  return { id: e.seq, event: e.event };
}
