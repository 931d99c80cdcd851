import { createRoute, z } from '@hono/zod-openapi';
import type { DepsOf } from '../../deps/deps.ts';
import { listFailedInvocations, MAX_LISTED } from '../../redrive/failure-listing.ts';
import { redriveAll, redriveOne } from '../../redrive/redrive.ts';
import { adminAuth } from '../auth.ts';
import { createRouteApp } from '../route-app.ts';
import { errorResponses, json, nextCursorSchema } from '../schemas/common.ts';
import type { TokenAuth } from '../token-auth.ts';

const tags = ['Admin'];
const failureSchema = z
  .object({
    id: z.string().describe("The failed invocation's request id"),
    functionName: z.string(),
    failedAt: z.string(),
    event: z.unknown().optional().describe('The event as sent; a redrive sends it again'),
    error: z.object({ type: z.string(), message: z.string() }),
  })
  .openapi('AsyncFailure');
const redrivenSchema = z.object({ id: z.string(), functionName: z.string() }).openapi('AsyncFailureRedriven');

const list = createRoute({
  method: 'get',
  path: '/async-failures',
  tags,
  summary: 'Failed asynchronous invocations (turn continuations, purges, sub-agent runs, GitHub work)',
  description: `The async-failures queue, in no particular order. Reading holds nothing back: a redrive right after sees every record. A listing pages through at most ${MAX_LISTED} records.`,
  request: {
    query: z.object({
      limit: z.coerce.number().int().min(1).max(100).default(20).describe('Items per page (1–100)'),
      cursor: z.string().optional().describe("The previous page's `nextCursor`"),
    }),
  },
  responses: {
    200: json(z.object({ failures: z.array(failureSchema), nextCursor: nextCursorSchema }), 'A page of failed invocations'),
    ...errorResponses(400, 403),
  },
});
const redriveById = createRoute({
  method: 'post',
  path: '/async-failures/{id}/redrive',
  tags,
  summary: 'Send one failed invocation again',
  description:
    'Invokes the function it failed in, asynchronously, with the same event; the record is removed once Lambda accepted the invocation. If it fails again, it is listed again under a new id. Every handler is safe to run twice.',
  request: { params: z.object({ id: z.string().min(1).max(200) }) },
  responses: { 202: json(redrivenSchema, 'Sent again and removed from the queue'), ...errorResponses(403, 404, 409) },
});
const redriveEvery = createRoute({
  method: 'post',
  path: '/async-failures/redrive',
  tags,
  summary: 'Send every failed invocation again',
  description:
    'Every record that failed before the call is sent again and removed once accepted; `kept` lists those left (no event, an unknown function, a refused invocation); `more` is true when the call stopped at its bound with records unread: call again.',
  responses: {
    200: json(
      z.object({ redriven: z.array(redrivenSchema), kept: z.array(z.object({ id: z.string(), reason: z.string() })), more: z.boolean() }),
      'What was sent again and what was kept',
    ),
    ...errorResponses(403),
  },
});

/**
 * The redrive of failed asynchronous work, with the admin token only:
 *   GET  /async-failures              a page of failed invocations
 *   POST /async-failures/:id/redrive  send one again
 *   POST /async-failures/redrive      send them all again
 */
export function adminAsyncFailureRoutes(deps: DepsOf<typeof redriveOne> & DepsOf<typeof listFailedInvocations>, auth: TokenAuth) {
  const app = createRouteApp();
  app.use('*', adminAuth(auth));
  app.openapi(list, async (c) => c.json(await listFailedInvocations(deps, c.req.valid('query')), 200));
  app.openapi(redriveById, async (c) => c.json(await redriveOne(deps, c.req.valid('param').id), 202));
  app.openapi(redriveEvery, async (c) => c.json(await redriveAll(deps), 200));
  return app;
}
