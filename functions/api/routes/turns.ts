import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { turnEventsUrl } from '../../turn/follow-turn.ts';
import { startTurn, startTurnAsync } from '../../turn/turn.ts';
import type { DepsOf } from '../../deps/deps.ts';
import { assertValidRules, turnSettingsSchema } from '../../session-settings/session-settings.ts';
import { invocationDeadline } from '../invocation-deadline.ts';
import { createRouteApp, jsonBodyLimit, untypedResponse } from '../route-app.ts';
import { errorResponses, idempotencyKeyHeader, sessionIdParam } from '../schemas/common.ts';
import { turnResultSchema } from '../schemas/sessions.ts';
import { SSE_DESCRIPTION, sseContent } from '../schemas/turn-events.ts';
import { respondWithTurn, type TurnResponseDeps } from '../turn-response.ts';

/** A prompt is at most 200,000 characters; JSON escapes can make that six times as many bytes. */
export const MAX_TURN_BODY_BYTES = 2 * 1024 * 1024;

const turnBody = z
  .strictObject({
    prompt: z.string().min(1, 'must not be empty').max(200_000),
    /** This turn's permission mode and request-only rules. */
    permissions: turnSettingsSchema.optional().describe("This turn's permission mode and request-only rules"),
  })
  .openapi('StartTurn');

/** How a turn is answered: SSE while it runs, or JSON once it ends (also for the last permission answer). */
export const turnResponses = {
  200: {
    description: `With \`Accept: text/event-stream\`: the turn's events as they happen (ending with \`turn_end\`, or \`turn_continued\` when the turn moves to another invocation). Otherwise the turn as JSON once it ends.\n\n${SSE_DESCRIPTION}`,
    content: { 'application/json': { schema: turnResultSchema }, ...sseContent },
  },
  202: {
    description: 'JSON only: the turn continues in another invocation (`stopReason: "checkpoint"`); follow `eventsUrl`',
    content: { 'application/json': { schema: turnResultSchema } },
  },
} as const;

/** What `Prefer: respond-async` answers at once: where the turn's events are. */
export const asyncTurnResponseSchema = z
  .object({
    sessionId: z.string(),
    turnId: z.string(),
    status: z.literal('running'),
    eventsUrl: z.string().describe("Follow the turn's events here (SSE or JSON)"),
    interruptUrl: z.string().describe('POST here to stop the turn'),
  })
  .openapi('AsyncTurn');

const turnHeaders = idempotencyKeyHeader.extend({
  prefer: z
    .string()
    .optional()
    .describe(
      '`respond-async` (RFC 7240): answer 202 at once with the turn id and its events URL (`Location`, `Preference-Applied: respond-async`); the turn runs in another invocation',
    ),
});

const start = createRoute({
  method: 'post',
  path: '/{id}/turns',
  tags: ['Turns'],
  summary: 'Run a turn',
  description:
    'Runs one turn to its end, even if the client disconnects. 409 `session_busy` (with `Retry-After`) while another turn runs, `awaiting_permission` while calls wait for answers.',
  middleware: [jsonBodyLimit(MAX_TURN_BODY_BYTES)] as const,
  request: { params: sessionIdParam, headers: turnHeaders, body: { content: { 'application/json': { schema: turnBody } }, required: true } },
  responses: {
    ...turnResponses,
    202: {
      description: `With \`Prefer: respond-async\`: the turn started and runs in another invocation; follow \`eventsUrl\` (also in \`Location\`). ${turnResponses[202].description}`,
      content: { 'application/json': { schema: z.union([asyncTurnResponseSchema, turnResultSchema]) } },
    },
    ...errorResponses(400, 404, 409, 413, 415, 422),
  },
});

/**
 * POST /v1/sessions/:id/turns runs one turn. With `Accept: text/event-stream` the turn's
 * events stream as SSE while it runs (ending with `turn_continued` if the turn moves to another
 * invocation: follow its `eventsUrl`); otherwise the response is JSON once it ends. Either way
 * the turn runs to its end even if the client disconnects. With `Prefer: respond-async` it
 * answers 202 at once with the turn id and its events URL; the turn runs in another invocation.
 */
export function turnRoutes(deps: DepsOf<typeof startTurn> & TurnResponseDeps) {
  const app = createRouteApp();

  app.openapi(start, async (c) => {
    const body = c.req.valid('json');
    assertValidRules(body.permissions?.rules, 'permissions.rules');
    const sessionId = c.req.valid('param').id;
    if (prefersAsync(c.req.valid('header').prefer)) {
      return untypedResponse(
        respondAsync(c, await startTurnAsync(deps, { sessionId, tenantId: c.get('tenantId'), prompt: body.prompt, settings: body.permissions })),
      );
    }
    const deadlineAt = invocationDeadline(c);
    const turn = await startTurn(deps, { sessionId, tenantId: c.get('tenantId'), prompt: body.prompt, settings: body.permissions, deadlineAt });
    return untypedResponse(await respondWithTurn(c, deps, turn, deadlineAt));
  });

  return app;
}

/** RFC 7240: `Prefer: respond-async` (among other preferences). */
export function prefersAsync(prefer: string | undefined): boolean {
  return (prefer ?? '').split(',').some((p) => p.trim().split(';')[0]!.trim().toLowerCase() === 'respond-async');
}

function respondAsync(c: Context, turn: { sessionId: string; turnId: string }) {
  const eventsUrl = turnEventsUrl(turn.sessionId, turn.turnId);
  c.header('Preference-Applied', 'respond-async');
  c.header('Location', eventsUrl);
  const body = {
    sessionId: turn.sessionId,
    turnId: turn.turnId,
    status: 'running' as const,
    eventsUrl,
    interruptUrl: `/v1/sessions/${turn.sessionId}/turns/${turn.turnId}/interrupt`,
  };
  return c.json(asyncTurnResponseSchema.parse(body), 202);
}
