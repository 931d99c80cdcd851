import type { Deps } from '../deps/deps.ts';
import { errorMessage, NotFoundError } from '../shared/errors.ts';
import type { ScheduleRecord } from '../stores/schedule-store.ts';
import type { AgentSchedule, SessionSchedules } from '../tools/tool.ts';
import { AGENT_SCHEDULE_MAX_AGE_DAYS, MAX_AGENT_SCHEDULES } from '../tools/schedule/schedule-limits.ts';
import { nextRunAt, validateSchedule } from './cron.ts';

/** Agent-made schedules run in UTC: the session has no local time of its own. */
const AGENT_TIMEZONE = 'UTC';

type AgentScheduleDeps = Pick<Deps, 'schedules' | 'scheduleBackend' | 'clock' | 'newId'>;

/**
 * The schedules an agent makes for its own session: ordinary Stratus schedules (the same
 * records, backend and firing path as `POST /v1/schedules`) that target the session, marked
 * `createdBy: {kind: 'agent', sessionId, toolUseId}`, so the schedules API lists them and the
 * agent can see and delete only its session's own.
 */
export function createSessionSchedules(deps: AgentScheduleDeps, session: { sessionId: string; tenantId: string }): SessionSchedules {
  const own = (r: ScheduleRecord) => r.createdBy?.kind === 'agent' && r.createdBy.sessionId === session.sessionId;
  const listOwn = async () => (await allForTenant(deps, session.tenantId)).filter(own);
  return {
    maxJobs: MAX_AGENT_SCHEDULES,
    validate: (cron) => validateAgentCron(cron, new Date(deps.clock())),
    create: async (input) => {
      const record = agentScheduleRecord(deps, session, input, new Date(deps.clock()));
      record.nextRunAt = (await nextRunAt(input.cron, AGENT_TIMEZONE, new Date(deps.clock())))?.getTime();
      await deps.schedules.put(record);
      await deps.scheduleBackend.upsert(record);
      return toAgentSchedule(record);
    },
    list: async () => (await listOwn()).sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0)).map(toAgentSchedule),
    delete: async (id) => {
      const record = await deps.schedules.getForTenant(id, session.tenantId).catch((err: unknown) => {
        if (err instanceof NotFoundError) return undefined;
        throw err;
      });
      if (!record || !own(record)) return false;
      await deps.scheduleBackend.remove(record.scheduleId);
      await deps.schedules.delete(record.scheduleId);
      return true;
    },
  };
}

function agentScheduleRecord(
  deps: AgentScheduleDeps,
  session: { sessionId: string; tenantId: string },
  input: { cron: string; prompt: string; recurring: boolean; toolUseId: string },
  now: Date,
): ScheduleRecord {
  return {
    scheduleId: deps.newId('sch'),
    tenantId: session.tenantId,
    name: `Agent: ${input.prompt.replace(/\s+/g, ' ').trim().slice(0, 80) || input.cron}`,
    cron: input.cron.trim(),
    timezone: AGENT_TIMEZONE,
    prompt: input.prompt,
    target: { sessionId: session.sessionId },
    enabled: true,
    createdAt: now.toISOString(),
    updatedAt: now.toISOString(),
    createdBy: { kind: 'agent', sessionId: session.sessionId, toolUseId: input.toolUseId },
    ...(input.recurring ? { expiresAt: now.getTime() + AGENT_SCHEDULE_MAX_AGE_DAYS * 24 * 3600_000 } : { oneShot: true as const }),
  };
}

/**
 * The reference's texts for an expression that is not cron or never fires within a year; the
 * schedules API's own rules (EventBridge's: a day of the month or of the week, not both) after them.
 */
async function validateAgentCron(cron: string, now: Date): Promise<void> {
  const { Cron } = await import('croner');
  let next: Date | null;
  try {
    if (cron.trim().split(/\s+/).length !== 5) throw new Error('not five fields');
    next = new Cron(cron.trim(), { paused: true, timezone: AGENT_TIMEZONE }).nextRun(now);
  } catch {
    throw new Error(`Invalid cron expression '${cron}'. Expected 5 fields: M H DoM Mon DoW.`);
  }
  if (!next || next.getTime() - now.getTime() > 366 * 24 * 3600_000) {
    throw new Error(`Cron expression '${cron}' does not match any calendar date in the next year.`);
  }
  try {
    await validateSchedule(cron.trim(), AGENT_TIMEZONE);
  } catch (err) {
    throw new Error(errorMessage(err));
  }
}

async function allForTenant(deps: AgentScheduleDeps, tenantId: string): Promise<ScheduleRecord[]> {
  const all: ScheduleRecord[] = [];
  let cursor: string | undefined;
  do {
    const page = await deps.schedules.listForTenant(tenantId, { limit: 100, ...(cursor ? { cursor } : {}) });
    all.push(...page.schedules);
    cursor = page.nextCursor;
  } while (cursor);
  return all;
}

function toAgentSchedule(record: ScheduleRecord): AgentSchedule {
  return { id: record.scheduleId, cron: record.cron, prompt: record.prompt, recurring: record.oneShot !== true };
}
