import { createRoute, z, type RouteHandler } from '@hono/zod-openapi';
import type { Deps } from '../../deps/deps.ts';
import { LimitError, UserError } from '../../shared/errors.ts';
import { nextRunAt, validateSchedule } from '../../schedules/cron.ts';
import { runScheduledTask, type ScheduleRunDeps } from '../../schedules/run-schedule.ts';
import { patchedTarget } from '../../schedules/schedule-target.ts';
import type { ScheduleRecord } from '../../stores/schedule-store.ts';
import { createRouteApp, jsonBodyLimit, type ApiEnv } from '../route-app.ts';
import { budgetsApiSchema, errorResponses, idempotencyKeyHeader, json, nextCursorSchema, pageQuerySchema, usageSchema } from '../schemas/common.ts';
import { assertSeedFiles, seedFilesSchema } from '../seed-files.ts';

/**
 * Largest schedule record, as JSON. A schedule is one DynamoDB item (at most 400 KB, names and
 * values together) that also gets its last run's summary; its prompt and seed files must fit.
 */
export const MAX_SCHEDULE_BYTES = 350_000;

const createBody = z
  .strictObject({
    name: z.string().min(1).max(200),
    cron: z.string().min(1).max(200).describe('Five-field cron: minute hour day-of-month month day-of-week'),
    timezone: z.string().max(100).default('UTC'),
    prompt: z.string().min(1).max(200_000),
    sessionId: z.string().optional().describe('Run each time in this session; otherwise a new session per run'),
    files: seedFilesSchema.optional().describe('Seed files for the new session of each run'),
    enabled: z.boolean().default(true),
    /** Budgets of the sessions this schedule creates (functions/agent/budget.ts). */
    budgets: budgetsApiSchema.optional(),
  })
  .openapi('CreateSchedule');

const patchBody = z
  .strictObject({
    name: z.string().min(1).max(200).optional(),
    cron: z.string().min(1).max(200).optional(),
    timezone: z.string().max(100).optional(),
    prompt: z.string().min(1).max(200_000).optional(),
    enabled: z.boolean().optional(),
    /** Another target: a session id, or null for a new session per run (seeded with `files`). */
    sessionId: z.string().nullable().optional().describe('Another target: a session id, or null for a new session per run (seeded with `files`)'),
    files: seedFilesSchema.optional(),
    budgets: budgetsApiSchema.optional(),
  })
  .openapi('UpdateSchedule');

/** A schedule is stored in at most MAX_SCHEDULE_BYTES; its body, with JSON escapes, in a few times that. */
const MAX_SCHEDULE_BODY_BYTES = 2 * 1024 * 1024;

const scheduleRunSchema = z
  .object({
    firedAt: z.string(),
    sessionId: z.string().optional(),
    turnId: z.string().optional(),
    outcome: z.string(),
    error: z.string().optional(),
    budget: z.string().optional().describe('With outcome `budget_exceeded`: which budget'),
    costUsd: z.number().optional().describe("The turn's cost in USD (priced usage)"),
    usage: usageSchema.optional(),
  })
  .openapi('ScheduleRun');

const scheduleSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    cron: z.string(),
    timezone: z.string(),
    prompt: z.string(),
    target: z.union([z.object({ sessionId: z.string() }), z.object({ newSession: z.literal(true) })]),
    enabled: z.boolean(),
    createdAt: z.string(),
    updatedAt: z.string(),
    nextRunAt: z.string().nullable(),
    lastRun: scheduleRunSchema.nullable(),
    runs: z.array(scheduleRunSchema).describe('Firings, newest first: outcome, session, turn, cost'),
    budgets: budgetsApiSchema.nullable(),
    createdBy: z
      .object({ kind: z.literal('agent'), sessionId: z.string(), toolUseId: z.string() })
      .nullable()
      .describe("Made by an agent's CronCreate call in that session (null: made through this API)"),
    recurring: z.boolean().describe("False for a one-shot schedule (an agent's `recurring: false`): it is deleted after it fires"),
    expiresAt: z.string().nullable().describe("An agent's recurring schedule: after this time it fires once more and is deleted"),
  })
  .openapi('Schedule');

const tags = ['Schedules'];
const scheduleIdParam = z.object({ id: z.string().describe('Schedule id (`sch_…`)') });

const create = createRoute({
  method: 'post',
  path: '/',
  tags,
  summary: 'Create a scheduled task',
  description: 'A prompt run unattended on a cron schedule.',
  middleware: [jsonBodyLimit(MAX_SCHEDULE_BODY_BYTES)] as const,
  request: { headers: idempotencyKeyHeader, body: { content: { 'application/json': { schema: createBody } }, required: true } },
  responses: { 201: json(scheduleSchema, 'The schedule'), ...errorResponses(400, 404, 413, 415, 422) },
});
const list = createRoute({
  method: 'get',
  path: '/',
  tags,
  summary: "The tenant's schedules",
  request: { query: pageQuerySchema },
  responses: { 200: json(z.object({ schedules: z.array(scheduleSchema), nextCursor: nextCursorSchema }), 'One page of schedules'), ...errorResponses(400) },
});
const get = createRoute({
  method: 'get',
  path: '/{id}',
  tags,
  summary: 'One schedule',
  request: { params: scheduleIdParam },
  responses: { 200: json(scheduleSchema, 'The schedule'), ...errorResponses(404) },
});
const patch = createRoute({
  method: 'patch',
  path: '/{id}',
  tags,
  summary: 'Change a schedule',
  middleware: [jsonBodyLimit(MAX_SCHEDULE_BODY_BYTES)] as const,
  request: { params: scheduleIdParam, body: { content: { 'application/json': { schema: patchBody } }, required: false } },
  responses: { 200: json(scheduleSchema, 'The schedule'), ...errorResponses(400, 404, 413, 415) },
});
const remove = createRoute({
  method: 'delete',
  path: '/{id}',
  tags,
  summary: 'Delete a schedule',
  request: { params: scheduleIdParam },
  responses: { 204: { description: 'Deleted' }, ...errorResponses(404) },
});
const runNow = createRoute({
  method: 'post',
  path: '/{id}/run',
  tags,
  summary: 'Run the schedule once now, to its end',
  description: 'A manual firing, recorded like any other.',
  request: { params: scheduleIdParam, headers: idempotencyKeyHeader },
  responses: { 200: json(z.object({ run: scheduleRunSchema.nullable() }), 'What the firing did'), ...errorResponses(404, 422) },
});

type ScheduleRouteDeps = Pick<Deps, 'sessions' | 'schedules' | 'scheduleBackend' | 'clock' | 'newId'> & ScheduleRunDeps;

/** Scheduled tasks: a prompt run unattended on a cron schedule. */
export function scheduleRoutes(deps: ScheduleRouteDeps) {
  const app = createRouteApp();

  app.openapi(create, createHandler(deps));

  app.openapi(list, async (c) => {
    const q = c.req.valid('query');
    const page = await deps.schedules.listForTenant(c.get('tenantId'), q);
    return c.json({ schedules: page.schedules.map(scheduleView), nextCursor: page.nextCursor ?? null }, 200);
  });

  app.openapi(get, async (c) => c.json(scheduleView(await deps.schedules.getForTenant(c.req.valid('param').id, c.get('tenantId'))), 200));

  app.openapi(patch, patchHandler(deps));

  app.openapi(remove, async (c) => {
    const current = await deps.schedules.getForTenant(c.req.valid('param').id, c.get('tenantId'));
    await deps.scheduleBackend.remove(current.scheduleId);
    await deps.schedules.delete(current.scheduleId);
    return c.body(null, 204);
  });

  /** Runs the schedule once now, to its end (a manual firing, recorded like any other). */
  app.openapi(runNow, async (c) => {
    const current = await deps.schedules.getForTenant(c.req.valid('param').id, c.get('tenantId'));
    const run = await runScheduledTask(deps, { kind: 'scheduled_task', scheduleId: current.scheduleId, firedAt: new Date(deps.clock()).toISOString() });
    return c.json({ run: run ?? null }, 200);
  });

  return app;
}

function createHandler(deps: ScheduleRouteDeps): RouteHandler<typeof create, ApiEnv> {
  return async (c) => {
    const body = c.req.valid('json');
    const tenantId = c.get('tenantId');
    await validateSchedule(body.cron, body.timezone);
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
      nextRunAt: (await nextRunAt(body.cron, body.timezone, now))?.getTime(),
      ...(body.budgets ? { budgets: body.budgets } : {}),
    };
    assertFits(record);
    await deps.schedules.put(record);
    await deps.scheduleBackend.upsert(record);
    return c.json(scheduleView(record), 201);
  };
}

function patchHandler(deps: ScheduleRouteDeps): RouteHandler<typeof patch, ApiEnv> {
  return async (c) => {
    const { sessionId, files, ...fields } = c.req.valid('json');
    const current = await deps.schedules.getForTenant(c.req.valid('param').id, c.get('tenantId'));
    assertSeedFiles(files, 'files');
    const updated: ScheduleRecord = {
      ...current,
      ...fields,
      target: await patchedTarget(deps, c.get('tenantId'), current.target, { sessionId, files }),
      updatedAt: new Date(deps.clock()).toISOString(),
    };
    await validateSchedule(updated.cron, updated.timezone);
    updated.nextRunAt = (await nextRunAt(updated.cron, updated.timezone, new Date(deps.clock())))?.getTime();
    assertFits(updated);
    await deps.schedules.put(updated);
    await deps.scheduleBackend.upsert(updated);
    return c.json(scheduleView(updated), 200);
  };
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
    target: 'sessionId' in r.target ? { sessionId: r.target.sessionId } : { newSession: true as const },
    enabled: r.enabled,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    nextRunAt: r.enabled && r.nextRunAt ? new Date(r.nextRunAt).toISOString() : null,
    lastRun: r.lastRun ?? null,
    /** Firings, newest first: outcome, session, turn, cost. */
    runs: [...(r.runs ?? [])].reverse(),
    budgets: r.budgets ?? null,
    createdBy: r.createdBy ?? null,
    recurring: r.oneShot !== true,
    expiresAt: r.expiresAt !== undefined ? new Date(r.expiresAt).toISOString() : null,
  };
}
