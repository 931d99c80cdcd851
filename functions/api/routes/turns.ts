import { Hono, type Context } from 'hono';
import { turnEventsUrl } from '../../agent/follow-turn.ts';
import { z } from 'zod';
import { startTurn, startTurnAsync } from '../../agent/turn.ts';
import type { DepsOf } from '../../deps/deps.ts';
import { assertValidRules, turnSettingsSchema } from '../../permissions/session-settings.ts';
import type { AuthVariables } from '../auth.ts';
import { invocationDeadline } from '../invocation-deadline.ts';
import { respondWithTurn, type TurnResponseDeps } from '../turn-response.ts';
import { parseJsonBody } from '../validate.ts';

const turnBody = z.strictObject({
  prompt: z.string().min(1, 'must not be empty').max(200_000),
  /** This turn's permission mode and request-only rules. */
  permissions: turnSettingsSchema.optional(),
});

/**
 * POST /v1/sessions/:id/turns runs one turn. With `Accept: text/event-stream` the turn's
 * events stream as SSE while it runs (ending with `turn_continued` if the turn moves to another
 * invocation: follow its `eventsUrl`); otherwise the response is JSON once it ends. Either way
 * the turn runs to its end even if the client disconnects. With `Prefer: respond-async` it
 * answers 202 at once with the turn id and its events URL; the turn runs in another invocation.
 */
export function turnRoutes(deps: DepsOf<typeof startTurn> & TurnResponseDeps) {
  const app = new Hono<{ Variables: AuthVariables }>();

  app.post('/:id/turns', async (c) => {
    const body = await parseJsonBody(c, turnBody);
    assertValidRules(body.permissions?.rules, 'permissions.rules');
    if (prefersAsync(c.req.header('prefer'))) return respondAsync(c, await startTurnAsync(deps, { sessionId: c.req.param('id'), tenantId: c.get('tenantId'), prompt: body.prompt, settings: body.permissions }));
    const deadlineAt = invocationDeadline(c);
    const turn = await startTurn(deps, { sessionId: c.req.param('id'), tenantId: c.get('tenantId'), prompt: body.prompt, settings: body.permissions, deadlineAt });
    return respondWithTurn(c, deps, turn, deadlineAt);
  });

  return app;
}

/** What `Prefer: respond-async` answers at once: where the turn's events are. */
export const asyncTurnResponseSchema = z.object({
  sessionId: z.string(),
  turnId: z.string(),
  status: z.literal('running'),
  eventsUrl: z.string(),
  interruptUrl: z.string(),
});

/** RFC 7240: `Prefer: respond-async` (among other preferences). */
export function prefersAsync(prefer: string | undefined): boolean {
  return (prefer ?? '').split(',').some((p) => p.trim().split(';')[0]!.trim().toLowerCase() === 'respond-async');
}

function respondAsync(c: Context, turn: { sessionId: string; turnId: string }) {
  const eventsUrl = turnEventsUrl(turn.sessionId, turn.turnId);
  c.header('Preference-Applied', 'respond-async');
  c.header('Location', eventsUrl);
  const body = { sessionId: turn.sessionId, turnId: turn.turnId, status: 'running' as const, eventsUrl, interruptUrl: `/v1/sessions/${turn.sessionId}/turns/${turn.turnId}/interrupt` };
  return c.json(asyncTurnResponseSchema.parse(body), 202);
}
