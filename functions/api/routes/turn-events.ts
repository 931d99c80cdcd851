import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import { endTurnIfDead } from '../../turn/crashed-turn.ts';
import { followTurn, turnEventsUrl } from '../../turn/follow-turn.ts';
import type { Deps, DepsOf } from '../../deps/deps.ts';
import { NotFoundError } from '../../shared/errors.ts';
import { isId, showId } from '../../shared/ids.ts';
import type { StoredTurnEvent } from '../../stores/event-store.ts';
import { invocationDeadline } from '../invocation-deadline.ts';
import { createRouteApp, untypedResponse } from '../route-app.ts';
import { startSseHeartbeat } from '../sse-heartbeat.ts';
import { errorResponses } from '../schemas/common.ts';
import { SSE_DESCRIPTION, sseContent, turnEventSchema } from '../schemas/turn-events.ts';

/**
 * A position in a turn's log: an event's number (at most 15 digits, so exact as a JavaScript
 * number), or -1 for "before the first", which an empty first page hands back as its nextCursor.
 */
const POSITION = /^(-1|\d{1,15})$/;

const followQuery = z.object({
  cursor: z
    .string()
    .regex(POSITION, 'must be the `nextCursor` of a previous page')
    .optional()
    .describe("The previous page's `nextCursor` (events after it); `Last-Event-ID` does the same for SSE"),
  after: z
    .string()
    .regex(POSITION, 'must be an event id, or -1 for the start')
    .optional()
    .describe('Deprecated: the same as `cursor` (kept for one release)')
    .openapi({ deprecated: true }),
  limit: z.coerce.number().int().min(1).max(1000).default(500).describe('Events per JSON page (1–1000)'),
});

/** A streaming follower ends this long before its invocation's deadline, telling the client to reconnect. */
const FOLLOW_MARGIN_MS = 5_000;

const eventsPageSchema = z
  .object({
    events: z.array(z.object({ id: z.number().int().describe("The event's number in its turn (the SSE id)"), event: turnEventSchema })),
    nextCursor: z.string().nullable().describe('Pass as `cursor` for the next page (poll it while the turn runs); null once the turn has ended (`done`)'),
    next: z.number().int().describe('Deprecated: the same position as a number, for `after` (kept for one release)').openapi({ deprecated: true }),
    done: z.boolean().describe('The turn has ended: the page holds its `turn_end`, or the cursor was already at or past it'),
  })
  .openapi('TurnEventsPage');

const follow = createRoute({
  method: 'get',
  path: '/{id}/turns/{turnId}/events',
  tags: ['Turns'],
  summary: "A turn's events from the durable log",
  description:
    'With `Accept: text/event-stream`: follows the turn until `turn_end`, resuming after `Last-Event-ID` (or `?cursor=`) — how a client reconnects, and how it keeps watching a turn that continued in another invocation. Where the server runs with a deadline (Lambda), the stream ends shortly before it with a `turn_continued` event (no id): reconnect with the last id seen. A position at or past the `turn_end` ends the stream at once. Otherwise one JSON page. A position that is not an event id (or -1) is a 400. A turn whose process died ends with a `crashed` turn_end; an unknown turn is a 404.',
  request: {
    params: z.object({ id: z.string().describe('Session id'), turnId: z.string().describe('Turn id (`turn_…`)') }),
    query: followQuery,
    headers: z.object({
      'last-event-id': z
        .string()
        .regex(/^\d{1,15}$/, 'must be the `id` of an event of this turn')
        .optional()
        .describe('SSE: resume after this event id'),
    }),
  },
  responses: {
    200: {
      description: `One JSON page, or the SSE stream.\n\n${SSE_DESCRIPTION}`,
      content: { 'application/json': { schema: eventsPageSchema }, ...sseContent },
    },
    ...errorResponses(400, 404),
  },
});

/**
 * GET /v1/sessions/:id/turns/:turnId/events — a turn's events from the durable log.
 * With `Accept: text/event-stream` it follows the turn until `turn_end`, resuming after
 * `Last-Event-ID` (or `?after=`), which is how a client reconnects, and how it keeps watching a
 * turn that continued in another invocation; a position at or past the turn_end ends it at once.
 * Without it, one JSON page (`done` once the turn has ended). Either way a turn whose process
 * died ends with a `crashed` turn_end.
 */
type TurnEventRouteDeps = Pick<Deps, 'sessions' | 'events' | 'config'> & DepsOf<typeof endTurnIfDead> & DepsOf<typeof followTurn>;

export function turnEventRoutes(deps: TurnEventRouteDeps) {
  const app = createRouteApp();

  app.openapi(follow, async (c) => {
    const { id: sessionId, turnId } = c.req.valid('param');
    const q = c.req.valid('query');
    const record = await deps.sessions.getForTenant(sessionId, c.get('tenantId'));
    const unknown = () => new NotFoundError(`Turn ${showId(turnId)} not found in session ${sessionId}.`);
    if (!isId('turn', turnId)) throw unknown();
    // A turn exists once it holds the session or has logged its turn_start (stored before its id is given out).
    if (record.lease?.turnId !== turnId && (await deps.events.listAfter(sessionId, turnId, -1, 1)).length === 0) throw unknown();
    const position = q.cursor ?? q.after ?? c.req.valid('header')['last-event-id'];
    const after = position === undefined ? -1 : Number(position);
    if (!(c.req.header('accept') ?? '').includes('text/event-stream')) return c.json(await eventPage(deps, sessionId, turnId, after, q.limit), 200);
    return untypedResponse(streamEvents(c, deps, { sessionId, turnId, after, limit: q.limit }));
  });

  return app;
}

/** One JSON page of the log after `after`. */
async function eventPage(deps: TurnEventRouteDeps, sessionId: string, turnId: string, after: number, limit: number) {
  let events = await deps.events.listAfter(sessionId, turnId, after, limit);
  let done = events.some((e) => e.event.type === 'turn_end');
  // At the end of the log without a turn_end: if the turn died, end its log now, so a
  // poller is never left waiting on a process that is gone. A log that ends, with no turn_end
  // on this page, ended at or before the cursor: nothing more will come either.
  if (events.length < limit && !done && (await endTurnIfDead(deps, sessionId, turnId))) {
    events = await deps.events.listAfter(sessionId, turnId, after, limit);
    done = true;
  }
  const next = events.at(-1)?.seq ?? after;
  return { events: events.map(view), nextCursor: done ? null : String(next), next, done };
}

/** The log as SSE, following the turn until its turn_end or until this invocation nears its deadline. */
function streamEvents(c: Context, deps: TurnEventRouteDeps, at: { sessionId: string; turnId: string; after: number; limit: number }): Response {
  const { sessionId, turnId } = at;
  const deadlineAt = invocationDeadline(c);
  return streamSSE(c, async (stream) => {
    let open = true;
    stream.onAbort(() => {
      open = false;
    });
    const beforeDeadline = () => deadlineAt === undefined || deadlineAt - Date.now() > FOLLOW_MARGIN_MS;
    const stopHeartbeat = startSseHeartbeat(stream, deps.config.api.sseHeartbeatMs);
    let ended = false;
    try {
      for await (const e of followTurn(deps, sessionId, turnId, at.after, () => open && beforeDeadline(), {
        limit: at.limit,
        sleep: (ms) => stream.sleep(ms),
      })) {
        await stream.writeSSE({ id: String(e.seq), event: e.event.type, data: JSON.stringify(e.event) });
        ended = e.event.type === 'turn_end';
      }
      // This invocation is about to end, the turn has not: the client reconnects (with the
      // last id it saw, which this event leaves as it was) to a fresh invocation. (A follower
      // that stops before its deadline stopped at the turn's end, seen now or resumed past.)
      if (!ended && open && !beforeDeadline()) {
        await stream.writeSSE({
          event: 'turn_continued',
          data: JSON.stringify({ type: 'turn_continued', turnId, eventsUrl: turnEventsUrl(sessionId, turnId) }),
          retry: 1_000,
        });
      }
    } finally {
      stopHeartbeat();
    }
  });
}

/** `id` is the event's number in its turn (the SSE id); `event` is what SSE sends as data. */
function view(e: StoredTurnEvent) {
  return { id: e.seq, event: e.event };
}
