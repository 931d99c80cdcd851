import { Hono } from 'hono';
import { z } from 'zod';
import { withDeadLeaseFreed } from '../../agent/crashed-turn.ts';
import { NO_EGRESS } from '../../../sandbox-runner/isolation/egress-mode.ts';
import type { Deps, DepsOf } from '../../deps/deps.ts';
import { assertValidRules, sessionSettingsSchema } from '../../permissions/session-settings.ts';
import { createSession } from '../../sessions/create-session.ts';
import { messageView, sessionView } from '../../sessions/session-view.ts';
import { LimitError, UserError } from '../../shared/errors.ts';
import { budgetsSchema } from '../../stores/budgets.ts';
import type { AuthVariables } from '../auth.ts';
import { assertSeedFiles, seedFilesSchema } from '../seed-files.ts';
import { parseJsonBody, parseWith } from '../validate.ts';

const createSessionBody = z.strictObject({
  title: z.string().max(200).optional(),
  files: seedFilesSchema.optional(),
  /** Permission mode, rules, hooks and the unattended flag. */
  settings: sessionSettingsSchema.optional(),
  /** maxModelCallsPerTurn, maxTurns, maxTokens, maxCostUsd, maxWallSecondsPerTurn (functions/agent/budget.ts). */
  budgets: budgetsSchema.optional(),
});

/**
 * Most bytes the settings may take as JSON. They are stored in the session's DynamoDB item (at
 * most 400 KB) with everything else the session keeps, and grow as remembered answers add rules.
 */
export const MAX_SETTINGS_BYTES = 100_000;

const pageQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().optional(),
});

export function sessionRoutes(
  deps: Pick<Deps, 'config' | 'clock' | 'sessions' | 'messages'> & DepsOf<typeof createSession> & DepsOf<typeof withDeadLeaseFreed>,
) {
  const app = new Hono<{ Variables: AuthVariables }>();

  app.post('/', async (c) => {
    const body = await parseJsonBody(c, createSessionBody);
    assertSeedFiles(body.files, 'files');
    const settingsBytes = Buffer.byteLength(JSON.stringify(body.settings ?? {}));
    if (settingsBytes > MAX_SETTINGS_BYTES) {
      throw new LimitError(`"settings" take ${settingsBytes} bytes as JSON; at most ${MAX_SETTINGS_BYTES} are stored with a session.`, 'request_too_large');
    }
    assertValidRules(body.settings?.rules, 'settings.rules');
    assertValidRules(body.settings?.projectRules, 'settings.projectRules');
    if (body.settings?.allowedDomains?.length && deps.config.egress === 'none') throw new UserError(NO_EGRESS, 'egress_unavailable');
    const record = await createSession(deps, { tenantId: c.get('tenantId'), title: body.title, files: body.files, settings: body.settings, budgets: body.budgets });
    return c.json(sessionView(record, deps.clock(), deps.config), 201);
  });

  app.get('/', async (c) => {
    const q = parseWith(pageQuery, c.req.query(), 'query');
    const page = await deps.sessions.listForTenant(c.get('tenantId'), { limit: q.limit, cursor: q.cursor });
    const sessions = await Promise.all(page.sessions.map((s) => withDeadLeaseFreed(deps, s)));
    return c.json({ sessions: sessions.map((s) => sessionView(s, deps.clock(), deps.config)), nextCursor: page.nextCursor ?? null });
  });

  app.get('/:id', async (c) => {
    const record = await withDeadLeaseFreed(deps, await deps.sessions.getForTenant(c.req.param('id'), c.get('tenantId')));
    return c.json(sessionView(record, deps.clock(), deps.config));
  });

  app.get('/:id/messages', async (c) => {
    const q = parseWith(pageQuery, c.req.query(), 'query');
    const sessionId = c.req.param('id');
    await deps.sessions.getForTenant(sessionId, c.get('tenantId'));
    const page = await deps.messages.page(sessionId, { limit: q.limit, cursor: q.cursor });
    return c.json({ messages: page.messages.map(messageView), nextCursor: page.nextCursor ?? null });
  });

  return app;
}
