import { Hono } from 'hono';
import { z } from 'zod';
import { startTurn } from '../../agent/turn.ts';
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
 * the turn runs to its end even if the client disconnects.
 */
export function turnRoutes(deps: DepsOf<typeof startTurn> & TurnResponseDeps) {
  const app = new Hono<{ Variables: AuthVariables }>();

  app.post('/:id/turns', async (c) => {
    const body = await parseJsonBody(c, turnBody);
    assertValidRules(body.permissions?.rules, 'permissions.rules');
    const deadlineAt = invocationDeadline(c);
    const turn = await startTurn(deps, { sessionId: c.req.param('id'), tenantId: c.get('tenantId'), prompt: body.prompt, settings: body.permissions, deadlineAt });
    return respondWithTurn(c, deps, turn, deadlineAt);
  });

  return app;
}
