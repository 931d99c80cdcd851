import { createRoute, z } from '@hono/zod-openapi';
import { withDeadLeaseFreed } from '../../turn/crashed-turn.ts';
import { NO_EGRESS } from '../../../sandbox-runner/common/egress-mode.ts';
import { assertOutboundSettings } from '../outbound-settings.ts';
import type { Deps, DepsOf } from '../../deps/deps.ts';
import { assertValidRules, sessionSettingsSchema } from '../../session-settings/session-settings.ts';
import { createSession } from '../../session/create-session.ts';
import { messagePageView, sessionView } from '../../session/session-view.ts';
import { LimitError, UserError } from '../../shared/errors.ts';
import { awaitsPerson, SESSION_ORDERS } from '../../stores/session-store.ts';
import { createRouteApp, jsonBodyLimit } from '../route-app.ts';
import { budgetsApiSchema, errorResponses, idempotencyKeyHeader, json, nextCursorSchema, pageQuerySchema, sessionIdParam } from '../schemas/common.ts';
import { messagePageSchema, sessionSchema } from '../schemas/sessions.ts';
import { assertSeedFiles, seedFilesSchema } from '../seed-files.ts';
import { MAX_JSON_BODY_BYTES } from '../validate.ts';

const createSessionBody = z
  .strictObject({
    title: z.string().max(200).optional(),
    files: seedFilesSchema.optional(),
    /** Permission mode, rules, hooks and the unattended flag. */
    settings: sessionSettingsSchema.optional().describe('Permission mode, rules, hooks, allowed domains and the unattended flag'),
    /** maxModelCallsPerTurn, maxTurns, maxTokens, maxCostUsd, maxWallSecondsPerTurn (functions/agent/budget.ts). */
    budgets: budgetsApiSchema.optional().describe('maxModelCallsPerTurn, maxTurns, maxTokens, maxCostUsd, maxWallSecondsPerTurn'),
  })
  .openapi('CreateSession');

/**
 * Most bytes the settings may take as JSON. They are stored in the session's DynamoDB item (at
 * most 400 KB) with everything else the session keeps, and grow as remembered answers add rules.
 */
export const MAX_SETTINGS_BYTES = 100_000;

const tags = ['Sessions'];

const sessionListQuery = pageQuerySchema.extend({
  order: z.enum(SESSION_ORDERS).default('created').describe('`created` (newest first, the default) or `activity` (most recently active first)'),
});

const create = createRoute({
  method: 'post',
  path: '/',
  tags,
  summary: 'Create a session',
  description: 'A new session with an empty workspace, or one holding the seed `files` (more goes through PUT …/workspace/archive).',
  middleware: [jsonBodyLimit(MAX_JSON_BODY_BYTES)] as const,
  request: { headers: idempotencyKeyHeader, body: { content: { 'application/json': { schema: createSessionBody } }, required: false } },
  responses: { 201: json(sessionSchema, 'The session'), ...errorResponses(400, 413, 415, 422, 429) },
});

const list = createRoute({
  method: 'get',
  path: '/',
  tags,
  summary: "List the tenant's sessions, newest first",
  description:
    'Ordered by creation (`order=created`, the default) or by last activity (`order=activity`: the last write to the session, a turn, a permission answer, an edit; `updatedAt`). ' +
    'A cursor continues the order it came from. By activity, a session that changes while you page moves to the front: it is never listed twice, but that pass may miss it.',
  request: { query: sessionListQuery },
  responses: { 200: json(z.object({ sessions: z.array(sessionSchema), nextCursor: nextCursorSchema }), 'One page of sessions'), ...errorResponses(400) },
});

const get = createRoute({
  method: 'get',
  path: '/{id}',
  tags,
  summary: "A session's status",
  description: 'A session whose turn died reads `idle` with last turn `crashed`.',
  request: { params: sessionIdParam },
  responses: { 200: json(sessionSchema, 'The session'), ...errorResponses(404) },
});

const messages = createRoute({
  method: 'get',
  path: '/{id}/messages',
  tags,
  summary: 'The message log, in order',
  request: { params: sessionIdParam, query: pageQuerySchema },
  responses: { 200: json(messagePageSchema, 'One page of messages'), ...errorResponses(400, 404) },
});

export function sessionRoutes(
  deps: Pick<Deps, 'config' | 'clock' | 'sessions' | 'messages' | 'outbound' | 'approvals'> & DepsOf<typeof createSession> & DepsOf<typeof withDeadLeaseFreed>,
) {
  const app = createRouteApp();

  app.openapi(create, async (c) => {
    const body = c.req.valid('json');
    assertSeedFiles(body.files, 'files');
    const settingsBytes = Buffer.byteLength(JSON.stringify(body.settings ?? {}));
    if (settingsBytes > MAX_SETTINGS_BYTES) {
      throw new LimitError(`"settings" take ${settingsBytes} bytes as JSON; at most ${MAX_SETTINGS_BYTES} are stored with a session.`, 'request_too_large');
    }
    assertValidRules(body.settings?.rules, 'settings.rules');
    assertValidRules(body.settings?.projectRules, 'settings.projectRules');
    if (body.settings?.allowedDomains?.length && deps.config.egress === 'none') throw new UserError(NO_EGRESS, 'egress_unavailable');
    assertOutboundSettings(deps.outbound, body.settings);
    const record = await createSession(deps, {
      tenantId: c.get('tenantId'),
      title: body.title,
      files: body.files,
      settings: body.settings,
      budgets: body.budgets,
    });
    return c.json(sessionView(record, deps.clock(), deps.config), 201);
  });

  app.openapi(list, async (c) => {
    const q = c.req.valid('query');
    const page = await deps.sessions.listForTenant(c.get('tenantId'), { limit: q.limit, cursor: q.cursor, order: q.order });
    const sessions = await Promise.all(page.sessions.map((s) => withDeadLeaseFreed(deps, s)));
    return c.json({ sessions: sessions.map((s) => sessionView(s, deps.clock(), deps.config)), nextCursor: page.nextCursor ?? null }, 200);
  });

  app.openapi(get, async (c) => {
    const record = await withDeadLeaseFreed(deps, await deps.sessions.getForTenant(c.req.valid('param').id, c.get('tenantId')));
    // Only a session that waits for a person can have questions: others cost no extra read.
    const waiting = awaitsPerson(record.status) ? await deps.approvals.listForSession(record.sessionId) : [];
    return c.json(sessionView(record, deps.clock(), deps.config, waiting), 200);
  });

  app.openapi(messages, async (c) => {
    const q = c.req.valid('query');
    const sessionId = c.req.valid('param').id;
    await deps.sessions.getForTenant(sessionId, c.get('tenantId'));
    const page = await deps.messages.page(sessionId, { limit: q.limit, cursor: q.cursor });
    return c.json(messagePageView(page), 200);
  });

  return app;
}
