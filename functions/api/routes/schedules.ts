import { Hono } from 'hono';
import { z } from 'zod';
import type { Deps, DepsOf } from '../../deps/deps.ts';
import { LimitError, UserError } from '../../shared/errors.ts';
import { nextRunAt, validateSchedule } from '../../schedules/cron.ts';
import { runScheduledTask, type ScheduleRunDeps } from '../../schedules/run-schedule.ts';
import { patchedTarget } from '../../schedules/schedule-target.ts';
import { budgetsSchema } from '../../stores/budgets.ts';
import type { ScheduleRecord } from '../../stores/schedule-store.ts';
import type { AuthVariables } from '../auth.ts';
import { assertSeedFiles, seedFilesSchema } from '../seed-files.ts';
import { parseJsonBody, parseWith } from '../validate.ts';

/**
 * Largest schedule record, as JSON. A schedule is one DynamoDB item (at most 400 KB, names and
 * values together) that also gets its last run's summary; its prompt and seed files must fit.
 */
export const MAX_SCHEDULE_BYTES = 350_000;

const createBody = z.strictObject({
  name: z.string().min(1).max(200),
  cron: z.string().min(1).max(200).describe('Five-field cron: minute hour day-of-month month day-of-week'),
  timezone: z.string().max(100).default('UTC'),
  prompt: z.string().min(1).max(200_000),
  sessionId: z.string().optional().describe('Run each time in this session; otherwise a new session per run'),
  files: seedFilesSchema.optional().describe('Seed files for the new session of each run'),
  enabled: z.boolean().default(true),
  /** Budgets of the sessions this schedule creates (functions/agent/budget.ts). */
  budgets: budgetsSchema.optional(),
});

const patchBody = z.strictObject({
  name: z.string().min(1).max(200).optional(),
  cron: z.string().min(1).max(200).optional(),
  timezone: z.string().max(100).optional(),
  prompt: z.string().min(1).max(200_000).optional(),
  enabled: z.boolean().optional(),
  /** Another target: a session id, or null for a new session per run (seeded with `files`). */
  sessionId: z.string().nullable().optional(),
  files: seedFilesSchema.optional(),
  budgets: budgetsSchema.optional(),
});

const pageQuery = z.object({ limit: z.coerce.number().int().min(1).max(200).default(50), cursor: z.string().optional() });

/** Scheduled tasks: a prompt run unattended on a cron schedule. */
export function scheduleRoutes(deps: Pick<Deps, 'sessions' | 'schedules' | 'scheduleBackend' | 'clock' | 'newId'> & ScheduleRunDeps) {
  const app = new Hono<{ Variables: AuthVariables }>();

  app.post('/', async (c) => {
    const body = await parseJsonBody(c, createBody);
    const tenantId = c.get('tenantId');
    validateSchedule(body.cron, body.timezone);
    if (body.sessionId && body.files) throw new UserError('Give either "sessionId" or "files", not both.');
    // Checked now, with the runner's rules: a bad seed would otherwise fail only when the schedule fires.
    assertSeedFiles(body.files, 'files');
    if (body.sessionId) await deps.sessions.getForTenant(body.sessionId, tenantId);
    const now = new Date(deps.clock());
    const record: ScheduleRecord = {
      scheduleId: deps.newId('sch'),
      tenantId,
      name: body.name,
      cron: body.cron,
      timezone: body.timezone,
      prompt: body.prompt,
      target: body.sessionId ? { sessionId: body.sessionId } : { newSession: { ...(body.files ? { files: body.files } : {}) } },
      enabled: body.enabled,
      createdAt: now.toISOString(),
      updatedAt: now.toISOString(),
      nextRunAt: nextRunAt(body.cron, body.timezone, now)?.getTime(),
      ...(body.budgets ? { budgets: body.budgets } : {}),
    };
    assertFits(record);
    await deps.schedules.put(record);
    await deps.scheduleBackend.upsert(record);
    return c.json(scheduleView(record), 201);
  });

  app.get('/', async (c) => {
    const q = parseWith(pageQuery, c.req.query(), 'query');
    const page = await deps.schedules.listForTenant(c.get('tenantId'), q);
    return c.json({ schedules: page.schedules.map(scheduleView), nextCursor: page.nextCursor ?? null });
  });

  app.get('/:id', async (c) => c.json(scheduleView(await deps.schedules.getForTenant(c.req.param('id'), c.get('tenantId')))));

  app.patch('/:id', async (c) => {
    const body = await parseJsonBody(c, patchBody);
    const current = await deps.schedules.getForTenant(c.req.param('id'), c.get('tenantId'));
    const { sessionId, files, ...fields } = body;
    assertSeedFiles(files, 'files');
    const updated: ScheduleRecord = { ...current, ...fields, target: await patchedTarget(deps, c.get('tenantId'), current.target, { sessionId, files }), updatedAt: new Date(deps.clock()).toISOString() };
    validateSchedule(updated.cron, updated.timezone);
    updated.nextRunAt = nextRunAt(updated.cron, updated.timezone, new Date(deps.clock()))?.getTime();
    assertFits(updated);
    await deps.schedules.put(updated);
    await deps.scheduleBackend.upsert(updated);
    return c.json(scheduleView(updated));
  });

  app.delete('/:id', async (c) => {
    const current = await deps.schedules.getForTenant(c.req.param('id'), c.get('tenantId'));
    await deps.scheduleBackend.remove(current.scheduleId);
    await deps.schedules.delete(current.scheduleId);
    return c.body(null, 204);
  });

  /** Runs the schedule once now, to its end (a manual firing, recorded like any other). */
  app.post('/:id/run', async (c) => {
    const current = await deps.schedules.getForTenant(c.req.param('id'), c.get('tenantId'));
    const run = await runScheduledTask(deps, { kind: 'scheduled_task', scheduleId: current.scheduleId, firedAt: new Date(deps.clock()).toISOString() });
    return c.json({ run: run ?? null });
  });

  return app;
}

function assertFits(record: ScheduleRecord): void {
  const bytes = Buffer.byteLength(JSON.stringify(record));
  if (bytes > MAX_SCHEDULE_BYTES) {
    throw new LimitError(
      `The schedule would take ${bytes} bytes with its prompt and seed files; at most ${MAX_SCHEDULE_BYTES} are stored. Shorten the prompt, or seed fewer files (or run in an existing session with "sessionId").`,
      'request_too_large',
    );
  }
}

function scheduleView(r: ScheduleRecord) {
  return {
    id: r.scheduleId,
    name: r.name,
    cron: r.cron,
    timezone: r.timezone,
    prompt: r.prompt,
    target: 'sessionId' in r.target ? { sessionId: r.target.sessionId } : { newSession: true },
    enabled: r.enabled,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    nextRunAt: r.enabled && r.nextRunAt ? new Date(r.nextRunAt).toISOString() : null,
    lastRun: r.lastRun ?? null,
    /** Firings, newest first: outcome, session, turn, cost. */
    runs: [...(r.runs ?? [])].reverse(),
    budgets: r.budgets ?? null,
  };
}
