import { createRoute, z } from '@hono/zod-openapi';
import { withDeadLeaseFreed } from '../../turn/crashed-turn.ts';
import { deleteSession } from '../../session/delete-session.ts';
import { NO_EGRESS } from '../../../sandbox-runner/common/egress-mode.ts';
import { assertOutboundSettings } from '../outbound-settings.ts';
import type { Deps, DepsOf } from '../../deps/deps.ts';
import { assertValidRules, sessionSettingsSchema, type SessionSettings } from '../../session-settings/session-settings.ts';
import { sessionView } from '../../session/session-view.ts';
import { LimitError, SessionBusyError, UserError } from '../../shared/errors.ts';
import { BUDGET_NAMES, budgetsSchema, type Budgets } from '../../stores/budgets.ts';
import { leaseIsDead, retryAfterSeconds, type SessionRecord } from '../../stores/session-store.ts';
import { createRouteApp, jsonBodyLimit } from '../route-app.ts';
import { errorResponses, json, sessionIdParam } from '../schemas/common.ts';
import { sessionSchema } from '../schemas/sessions.ts';
import { MAX_JSON_BODY_BYTES } from '../validate.ts';
import { MAX_SETTINGS_BYTES } from './sessions.ts';

/** A budget set to null is removed (the tenant's default, if any, applies again). */
const budgetsPatchSchema = z.strictObject(
  Object.fromEntries(BUDGET_NAMES.map((name) => [name, budgetsSchema.shape[name].unwrap().nullable().optional()])) as {
    [K in (typeof BUDGET_NAMES)[number]]: z.ZodOptional<z.ZodNullable<ReturnType<(typeof budgetsSchema.shape)[K]['unwrap']>>>;
  },
);

/**
 * PATCH /v1/sessions/:id: what may change after creation. Fields present replace; absent ones stay.
 * `settings` members replace the session's members of the same name (permission mode, rules,
 * allowed domains, ...); `budgets` members replace, `null` removes one.
 */
export const patchSessionBody = z
  .strictObject({
    title: z.string().max(200).nullable().optional(),
    settings: sessionSettingsSchema.optional().describe("Members replace the session's members of the same name; refused (409) while a turn runs"),
    budgets: budgetsPatchSchema.optional().describe('Members replace; `null` removes one (the tenant default applies again)'),
  })
  .openapi('UpdateSession');

export type PatchSessionBody = z.infer<typeof patchSessionBody>;

/**
 * DELETE and PATCH of a session. DELETE answers 202 at once (the session is 404 from then on;
 * its data goes asynchronously). PATCH of `settings` is refused while a turn runs (409
 * `session_busy`: the turn writes the settings it works with); title and budgets change any time,
 * and a running turn sees new budgets at its next heartbeat.
 */
type SessionAdminDeps = Pick<Deps, 'config' | 'clock' | 'sessions' | 'outbound'> & DepsOf<typeof deleteSession> & DepsOf<typeof withDeadLeaseFreed>;

const tags = ['Sessions'];

const remove = createRoute({
  method: 'delete',
  path: '/{id}',
  tags,
  summary: 'Delete a session',
  description:
    'Answers at once: the session is 404 from then on; its messages, events, approvals, results and workspace are removed asynchronously. A running turn is interrupted.',
  request: { params: sessionIdParam },
  responses: {
    202: json(z.object({ id: z.string(), deleted: z.literal(true) }).openapi('SessionDeleted'), 'Deleted; its data goes asynchronously'),
    ...errorResponses(404),
  },
});

const patch = createRoute({
  method: 'patch',
  path: '/{id}',
  tags,
  summary: "Change a session's title, settings or budgets",
  description:
    'Fields present replace, absent ones stay. `settings` only while no turn runs (409 `session_busy`); title and budgets any time (a running turn sees new budgets at its next heartbeat).',
  middleware: [jsonBodyLimit(MAX_JSON_BODY_BYTES)] as const,
  request: { params: sessionIdParam, body: { content: { 'application/json': { schema: patchSessionBody } }, required: false } },
  responses: { 200: json(sessionSchema, 'The session'), ...errorResponses(400, 404, 409, 413, 415) },
});

/**
 * DELETE and PATCH of a session. DELETE answers 202 at once (the session is 404 from then on;
 * its data goes asynchronously). PATCH of `settings` is refused while a turn runs (409
 * `session_busy`: the turn writes the settings it works with); title and budgets change any time,
 * and a running turn sees new budgets at its next heartbeat.
 */
export function sessionAdminRoutes(deps: SessionAdminDeps) {
  const app = createRouteApp();

  app.openapi(remove, async (c) => {
    const sessionId = c.req.valid('param').id;
    await deleteSession(deps, { sessionId, tenantId: c.get('tenantId') });
    return c.json({ id: sessionId, deleted: true as const }, 202);
  });

  app.openapi(patch, async (c) => {
    const sessionId = c.req.valid('param').id;
    const record = await withDeadLeaseFreed(deps, await deps.sessions.getForTenant(sessionId, c.get('tenantId')));
    const change = sessionPatch(deps, record, c.req.valid('json'));
    const updated = Object.keys(change).length > 0 ? await deps.sessions.updateSettings(sessionId, change) : record;
    return c.json(sessionView(updated, deps.clock(), deps.config), 200);
  });

  return app;
}

/** What PATCH changes in the stored session. */
function sessionPatch(deps: SessionAdminDeps, record: SessionRecord, body: PatchSessionBody): Parameters<SessionAdminDeps['sessions']['updateSettings']>[1] {
  const change: Parameters<SessionAdminDeps['sessions']['updateSettings']>[1] = {};
  if (body.title !== undefined) change.title = body.title ?? '';
  if (body.settings) {
    const now = deps.clock();
    if (record.lease && !leaseIsDead(record.lease, now)) throw new SessionBusyError(record.sessionId, retryAfterSeconds(record.lease, now));
    change.settings = mergeSettings(deps, record.settings, body.settings);
  }
  if (body.budgets) change.budgets = mergeBudgets(record.budgets, body.budgets);
  return change;
}

function mergeSettings(deps: Pick<Deps, 'config' | 'outbound'>, current: SessionSettings | undefined, change: SessionSettings): SessionSettings {
  assertValidRules(change.rules, 'settings.rules');
  assertValidRules(change.projectRules, 'settings.projectRules');
  if (change.allowedDomains?.length && deps.config.egress === 'none') throw new UserError(NO_EGRESS, 'egress_unavailable');
  const merged = { ...current, ...change };
  assertOutboundSettings(deps.outbound, merged);
  const bytes = Buffer.byteLength(JSON.stringify(merged));
  if (bytes > MAX_SETTINGS_BYTES)
    throw new LimitError(`"settings" would take ${bytes} bytes as JSON; at most ${MAX_SETTINGS_BYTES} are stored with a session.`, 'request_too_large');
  return merged;
}

function mergeBudgets(current: Budgets | undefined, change: z.infer<typeof budgetsPatchSchema>): Budgets {
  const merged: Budgets = { ...current };
  for (const name of BUDGET_NAMES) {
    const value = change[name];
    if (value === null) delete merged[name];
    else if (value !== undefined) merged[name] = value;
  }
  return merged;
}
