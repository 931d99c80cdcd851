import { z } from 'zod';
import { BudgetExceededError } from '../agent/budget.ts';
import { startTurn } from '../turn/turn.ts';
import type { Deps, DepsOf } from '../deps/deps.ts';
import { errorMessage, SessionBusyError } from '../shared/errors.ts';
import { createSession } from '../session/create-session.ts';
import type { ScheduleRecord, ScheduleRun } from '../stores/schedule-store.ts';
import { nextRunAt } from './cron.ts';

export const scheduledTaskEventSchema = z.object({
  kind: z.literal('scheduled_task'),
  scheduleId: z.string(),
  /** ISO time of the firing; one firing runs once however often it is delivered. */
  firedAt: z.string(),
});

export type ScheduledTaskEvent = z.infer<typeof scheduledTaskEventSchema>;

/** What a firing uses: the schedule records and a log, plus what session creation and the turn need. */
export type ScheduleRunDeps = Pick<Deps, 'schedules' | 'scheduleBackend' | 'log'> & DepsOf<typeof createSession> & DepsOf<typeof startTurn>;

/** What the cron function does with the event its EventBridge schedule delivers. */
export async function handleScheduledEvent(deps: ScheduleRunDeps, event: unknown, deadlineAt?: number): Promise<ScheduleRun | undefined> {
  const parsed = scheduledTaskEventSchema.safeParse(event);
  if (!parsed.success) throw new Error(`Not a scheduled task event: ${parsed.error.message}`);
  return runScheduledTask(deps, parsed.data, deadlineAt);
}

/**
 * Runs one firing of a schedule: claims it (a duplicate delivery does nothing), opens or
 * reuses the session, runs the prompt as an unattended turn to its end, and records the run.
 */
export async function runScheduledTask(deps: ScheduleRunDeps, event: ScheduledTaskEvent, deadlineAt?: number): Promise<ScheduleRun | undefined> {
  const log = deps.log.child({ scheduleId: event.scheduleId, firedAt: event.firedAt });
  const schedule = await deps.schedules.get(event.scheduleId);
  if (!schedule) {
    log.warn('schedule fired but no longer exists');
    return undefined;
  }
  const next = await nextRunAt(schedule.cron, schedule.timezone, new Date(event.firedAt));
  if (!(await deps.schedules.claimFiring(schedule.scheduleId, event.firedAt, next?.getTime()))) {
    log.info('firing already claimed; ignoring a duplicate');
    return undefined;
  }
  let run: ScheduleRun;
  let sessionId: string | undefined;
  try {
    sessionId = await targetSession(deps, schedule, event.firedAt);
    const turn = await startTurn(deps, { sessionId, tenantId: schedule.tenantId, prompt: schedule.prompt, deadlineAt });
    const summary = await turn.done;
    run = {
      firedAt: event.firedAt,
      sessionId,
      turnId: turn.turnId,
      outcome: summary.stopReason,
      ...(summary.error ? { error: summary.error.slice(0, 1_000) } : {}),
      ...(summary.budget ? { budget: summary.budget } : {}),
      ...(summary.usage ? { usage: summary.usage, costUsd: summary.usage.costUsd ?? 0 } : {}),
    };
  } catch (err) {
    const outcome = err instanceof SessionBusyError ? 'skipped_session_busy' : err instanceof BudgetExceededError ? 'budget_exceeded' : 'failed';
    run = {
      firedAt: event.firedAt,
      ...(sessionId ? { sessionId } : {}),
      outcome,
      error: errorMessage(err).slice(0, 1_000),
      ...(err instanceof BudgetExceededError ? { budget: err.exceeded.budget } : {}),
    };
    log.warn('scheduled run did not complete', { outcome, error: run.error });
  }
  await deps.schedules.recordRun(schedule.scheduleId, run);
  log.info('scheduled run recorded', { outcome: run.outcome, sessionId: run.sessionId });
  if (isLastFiring(schedule, event.firedAt)) await retire(deps, schedule.scheduleId, log);
  return run;
}

/** An agent's one-shot schedule has fired; an agent's recurring one fires once more after it aged out, then goes. */
function isLastFiring(schedule: ScheduleRecord, firedAt: string): boolean {
  return schedule.oneShot === true || (schedule.expiresAt !== undefined && Date.parse(firedAt) >= schedule.expiresAt);
}

async function retire(deps: Pick<ScheduleRunDeps, 'schedules' | 'scheduleBackend'>, scheduleId: string, log: ScheduleRunDeps['log']): Promise<void> {
  await deps.scheduleBackend.remove(scheduleId);
  await deps.schedules.delete(scheduleId);
  log.info('schedule deleted after its last firing');
}

/** The session a firing runs in: the schedule's own, or a new unattended one named after the firing. */
async function targetSession(deps: ScheduleRunDeps, schedule: ScheduleRecord, firedAt: string): Promise<string> {
  if ('sessionId' in schedule.target) return schedule.target.sessionId;
  const created = await createSession(deps, {
    tenantId: schedule.tenantId,
    title: `${schedule.name} @ ${firedAt}`,
    files: schedule.target.newSession.files,
    settings: { unattended: true },
    ...(schedule.budgets ? { budgets: schedule.budgets } : {}),
  });
  return created.sessionId;
}
