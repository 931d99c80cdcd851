import { createRoute, z } from '@hono/zod-openapi';
import type { Deps } from '../../deps/deps.ts';
import type { DeliveryLogRecord } from '../../stores/github-delivery-log.ts';
import { createRouteApp } from '../route-app.ts';
import { errorResponses, json, nextCursorSchema, pageQuerySchema } from '../schemas/common.ts';

const deliverySchema = z
  .object({
    deliveryId: z.string().describe('`X-GitHub-Delivery`'),
    event: z.string().describe('`X-GitHub-Event`, e.g. `issue_comment`'),
    action: z.string().nullable().describe("The payload's `action`, e.g. `created`"),
    repository: z.string(),
    number: z.number().int().nullable().describe('The issue or pull request it concerns'),
    sender: z.string().nullable(),
    decision: z
      .enum(['accepted', 'ran', 'queued', 'ignored', 'refused', 'failed'])
      .describe(
        "accepted: handed to the worker, not decided yet; ran: a run worked on it; queued: it joined the run already working on its item; ignored: it asks for nothing, or it is Stratus's own doing (`reason`); refused: a sender who may not start runs, or the rate limit (`reason`); failed",
      ),
    reason: z.string().nullable().describe('Why it was ignored or refused'),
    runId: z.string().nullable().describe('The run it started (`GET /v1/github/runs`)'),
    outcome: z.string().nullable().describe("That run's outcome"),
    sessionId: z.string().nullable(),
    createdAt: z.string().describe('When it arrived'),
    updatedAt: z.string(),
  })
  .openapi('GithubDelivery');

const listDeliveries = createRoute({
  method: 'get',
  path: '/deliveries',
  tags: ['GitHub'],
  summary: "Webhook deliveries for this tenant's repositories, newest first, and what became of each",
  description:
    "Every delivery routed to one of the tenant's connected repositories (a delivery for a repository nobody connected belongs to no tenant and is not listed). Kept `STRATUS_GITHUB_DELIVERY_LOG_DAYS` days (default 30). A redelivery of a listed delivery keeps its first entry.",
  request: { query: pageQuerySchema },
  responses: {
    200: json(z.object({ deliveries: z.array(deliverySchema), nextCursor: nextCursorSchema }), 'One page of deliveries'),
    ...errorResponses(400),
  },
});

function deliveryView(r: DeliveryLogRecord): z.infer<typeof deliverySchema> {
  return {
    deliveryId: r.deliveryId,
    event: r.event,
    action: r.action ?? null,
    repository: r.repository,
    number: r.number ?? null,
    sender: r.sender ?? null,
    decision: r.decision,
    reason: r.reason ?? null,
    runId: r.runId ?? null,
    outcome: r.outcome ?? null,
    sessionId: r.sessionId ?? null,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}

/** `GET /v1/github/deliveries`: the tenant's delivery log (functions/stores/github-delivery-log.ts). */
export function githubDeliveryRoutes(deps: Pick<Deps, 'githubDeliveryLog'>) {
  const app = createRouteApp();
  app.openapi(listDeliveries, async (c) => {
    const page = await deps.githubDeliveryLog.list(c.get('tenantId'), c.req.valid('query'));
    return c.json({ deliveries: page.items.map(deliveryView), nextCursor: page.nextCursor ?? null }, 200);
  });
  return app;
}
