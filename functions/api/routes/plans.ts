import { createRoute, z, type RouteHandler } from '@hono/zod-openapi';
import { startTurn } from '../../turn/turn.ts';
import type { Deps, DepsOf } from '../../deps/deps.ts';
import { decidePlan, findPlan, planView } from '../../session/plan-approval.ts';
import { NotFoundError } from '../../shared/errors.ts';
import { showId } from '../../shared/ids.ts';
import type { ApiEnv } from '../route-app.ts';
import { invocationDeadline } from '../invocation-deadline.ts';
import { createRouteApp, jsonBodyLimit, untypedResponse } from '../route-app.ts';
import { errorResponses, idempotencyKeyHeader, json, planSchema, sessionIdParam } from '../schemas/common.ts';
import { respondWithTurn, type TurnResponseDeps } from '../turn-response.ts';
import { handResumedTurnToGithub, type ResumedRunDeps } from '../../github/resumed-run.ts';
import { turnResponses } from './turns.ts';

const decisionBody = z
  .discriminatedUnion('decision', [
    z.strictObject({
      decision: z.literal('approve'),
      plan: z.string().min(1).max(100_000).optional().describe('The plan as the person edited it; absent: approved as the agent wrote it'),
      mode: z.enum(['default', 'acceptEdits']).optional().describe('The permission mode the session continues in (default: `default`)'),
    }),
    z.strictObject({
      decision: z.literal('reject'),
      feedback: z.string().min(1).max(10_000).optional().describe('What the agent should change; it stays in plan mode'),
    }),
  ])
  .openapi('PlanDecision');

const tags = ['Plans'];
const planParams = z.object({ id: z.string().describe('Session id'), toolUseId: z.string().describe('The `toolUseId` of the plan (its ExitPlanMode call)') });

const list = createRoute({
  method: 'get',
  path: '/{id}/plans',
  tags,
  summary: "The agent's plans waiting for approval",
  request: { params: sessionIdParam },
  responses: { 200: json(z.object({ plans: z.array(planSchema) }), 'The waiting plans'), ...errorResponses(404) },
});

const getOne = createRoute({
  method: 'get',
  path: '/{id}/plans/{toolUseId}',
  tags,
  summary: 'One plan: waiting, approved (as approved) or rejected',
  request: { params: planParams },
  responses: { 200: json(planSchema, 'The plan'), ...errorResponses(404) },
});

const decide = createRoute({
  method: 'post',
  path: '/{id}/plans/{toolUseId}',
  tags,
  summary: 'Approve or reject a waiting plan',
  description:
    'Approve (optionally with the plan edited, and the mode to continue in) or reject with feedback. When nothing else waits, the turn resumes here and the response is that turn (JSON or SSE, as for POST …/turns); until then, 202 with what still waits. 409 `already_answered` once the plan was decided.',
  middleware: [jsonBodyLimit(256 * 1024)] as const,
  request: { params: planParams, headers: idempotencyKeyHeader, body: { content: { 'application/json': { schema: decisionBody } }, required: true } },
  responses: {
    ...turnResponses,
    202: {
      description: 'Other calls still wait for a person; or (JSON) the resumed turn continues in another invocation',
      content: {
        'application/json': {
          schema: z.union([
            z.object({ status: z.literal('awaiting_permission'), waiting: z.array(z.string()).describe('The tool_use ids still waiting') }),
            turnResponses[202].content['application/json'].schema,
          ]),
        },
      },
    },
    ...errorResponses(400, 404, 409, 413, 415, 422),
  },
});

type PlanRouteDeps = Pick<Deps, 'sessions' | 'approvals' | 'clock'> & DepsOf<typeof startTurn> & TurnResponseDeps & ResumedRunDeps;

/** The model API's own rule for tool_use ids; anything else cannot be a plan (and must not reach the table as a key). */
function checkedToolUseId(sessionId: string, toolUseId: string): string {
  if (!/^[\w-]{1,256}$/.test(toolUseId)) throw new NotFoundError(`No plan ${showId(toolUseId)} in session ${sessionId}.`);
  return toolUseId;
}

function decideHandler(deps: PlanRouteDeps): RouteHandler<typeof decide, ApiEnv> {
  return async (c) => {
    const { id: sessionId, toolUseId } = c.req.valid('param');
    const tenantId = c.get('tenantId');
    await deps.sessions.getForTenant(sessionId, tenantId);
    const waiting = await decidePlan(deps, sessionId, checkedToolUseId(sessionId, toolUseId), c.req.valid('json'));
    if (waiting.length > 0) return c.json({ status: 'awaiting_permission' as const, waiting: waiting.map((w) => w.toolUseId) }, 202);
    const deadlineAt = invocationDeadline(c);
    const turn = await startTurn(deps, { sessionId, tenantId, resume: true, deadlineAt });
    // A GitHub run's plan decided here: the worker follows the turn and publishes it.
    await handResumedTurnToGithub(deps, sessionId, toolUseId);
    return untypedResponse(await respondWithTurn(c, deps, turn, deadlineAt));
  };
}

/** The agent's plans (ExitPlanMode): what waits, how each was decided, and the decision that resumes the turn on whichever instance gets it. */
export function planRoutes(deps: PlanRouteDeps) {
  const app = createRouteApp();
  app.openapi(list, async (c) => {
    const record = await deps.sessions.getForTenant(c.req.valid('param').id, c.get('tenantId'));
    const pending = await deps.approvals.listForSession(record.sessionId);
    return c.json({ plans: pending.filter((p) => p.kind === 'plan' && p.decision === undefined).map(planView) }, 200);
  });
  app.openapi(getOne, async (c) => {
    const { id: sessionId, toolUseId } = c.req.valid('param');
    await deps.sessions.getForTenant(sessionId, c.get('tenantId'));
    const item = await findPlan(deps, sessionId, checkedToolUseId(sessionId, toolUseId));
    if (!item) throw new NotFoundError(`No plan ${toolUseId} in session ${sessionId}.`);
    return c.json(planView(item), 200);
  });
  app.openapi(decide, decideHandler(deps));
  return app;
}
