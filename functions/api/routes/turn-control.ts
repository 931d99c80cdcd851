import { createRoute, z } from '@hono/zod-openapi';
import { INTERRUPT_WAIT_MS, interruptTurn } from '../../turn/interrupt-turn.ts';
import type { DepsOf } from '../../deps/deps.ts';
import { invocationDeadline } from '../invocation-deadline.ts';
import { createRouteApp } from '../route-app.ts';
import { errorResponses, idempotencyKeyHeader, json } from '../schemas/common.ts';
import { turnSummarySchema } from '../schemas/sessions.ts';

/** What `POST …/interrupt` answers (200 once the turn ended, 202 while it still finishes). */
export const interruptResponseSchema = z
  .object({
    turnId: z.string(),
    state: z.enum(['stopped', 'stopping']),
    lastTurn: turnSummarySchema.nullable().optional().describe("The session's last turn once this one ended"),
    eventsUrl: z.string().describe('The turn\'s events (it ends with `turn_end`, `stopReason: "interrupted"`)'),
  })
  .openapi('InterruptOutcome');

/** An interrupt answers well before its invocation's deadline. */
const DEADLINE_MARGIN_MS = 2_000;

const interrupt = createRoute({
  method: 'post',
  path: '/{id}/turns/{turnId}/interrupt',
  tags: ['Turns'],
  summary: 'Stop a running turn',
  description:
    'Stops the turn wherever it runs: running Bash commands are killed, tools that cannot be interrupted finish, every tool call gets a result, and the turn ends with `stopReason: "interrupted"`. 409 `turn_not_running` for a turn that already ended.',
  request: {
    params: z.object({ id: z.string().describe('Session id (`ses_…`)'), turnId: z.string().describe('Turn id (`turn_…`)') }),
    headers: idempotencyKeyHeader,
  },
  responses: {
    200: json(interruptResponseSchema, 'The turn has ended; the session takes the next prompt now'),
    202: json(interruptResponseSchema, 'The turn is still finishing (`stopping`); follow `eventsUrl`'),
    ...errorResponses(404, 409, 422),
  },
});

/**
 * POST /v1/sessions/:id/turns/:turnId/interrupt stops a running turn wherever it runs. Running
 * Bash commands are killed; tools whose interruptBehavior is `block` finish; every tool_use gets
 * a tool_result; the turn ends with `stopReason: "interrupted"`. 200 when it has ended (the
 * session takes the next prompt now), 202 `stopping` if it is still finishing after a few seconds;
 * 409 `turn_not_running` for a turn that already ended, 404 for one that never existed.
 */
export function turnControlRoutes(deps: DepsOf<typeof interruptTurn>) {
  const app = createRouteApp();

  app.openapi(interrupt, async (c) => {
    const { id: sessionId, turnId } = c.req.valid('param');
    const deadlineAt = invocationDeadline(c);
    const waitMs = deadlineAt === undefined ? undefined : Math.max(0, Math.min(INTERRUPT_WAIT_MS, deadlineAt - Date.now() - DEADLINE_MARGIN_MS));
    const outcome = interruptResponseSchema.parse(await interruptTurn(deps, { sessionId, tenantId: c.get('tenantId'), turnId, waitMs }));
    return outcome.state === 'stopped' ? c.json(outcome, 200) : c.json(outcome, 202);
  });

  return app;
}
