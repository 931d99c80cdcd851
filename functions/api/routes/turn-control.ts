import { Hono } from 'hono';
import { z } from 'zod';
import { INTERRUPT_WAIT_MS, interruptTurn } from '../../agent/interrupt-turn.ts';
import type { DepsOf } from '../../deps/deps.ts';
import type { AuthVariables } from '../auth.ts';
import { invocationDeadline } from '../invocation-deadline.ts';

/** What `POST …/interrupt` answers (200 once the turn ended, 202 while it still finishes). */
export const interruptResponseSchema = z.object({
  turnId: z.string(),
  state: z.enum(['stopped', 'stopping']),
  lastTurn: z
    .object({ turnId: z.string(), stopReason: z.string(), startedAt: z.string(), endedAt: z.string(), error: z.string().optional(), budget: z.string().optional() })
    .nullable()
    .optional(),
  eventsUrl: z.string(),
});

/** An interrupt answers well before its invocation's deadline. */
const DEADLINE_MARGIN_MS = 2_000;

/**
 * POST /v1/sessions/:id/turns/:turnId/interrupt stops a running turn wherever it runs. Running
 * Bash commands are killed; tools whose interruptBehavior is `block` finish; every tool_use gets
 * a tool_result; the turn ends with `stopReason: "interrupted"`. 200 when it has ended (the
 * session takes the next prompt now), 202 `stopping` if it is still finishing after a few seconds;
 * 409 `turn_not_running` for a turn that already ended, 404 for one that never existed.
 */
export function turnControlRoutes(deps: DepsOf<typeof interruptTurn>) {
  const app = new Hono<{ Variables: AuthVariables }>();

  app.post('/:id/turns/:turnId/interrupt', async (c) => {
    const deadlineAt = invocationDeadline(c);
    const waitMs = deadlineAt === undefined ? undefined : Math.max(0, Math.min(INTERRUPT_WAIT_MS, deadlineAt - Date.now() - DEADLINE_MARGIN_MS));
    const outcome = await interruptTurn(deps, { sessionId: c.req.param('id'), tenantId: c.get('tenantId'), turnId: c.req.param('turnId'), waitMs });
    return c.json(interruptResponseSchema.parse(outcome), outcome.state === 'stopped' ? 200 : 202);
  });

  return app;
}
