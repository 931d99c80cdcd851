import type { Deps } from '../deps/deps.ts';
import { errorMessage } from '../shared/errors.ts';
import { runScheduledTask, type ScheduleRunDeps } from './run-schedule.ts';
import { sweepExpiredQuestions, type QuestionTimeoutDeps } from './question-timeouts.ts';

export interface LocalScheduler {
  /** Fires every schedule due now; what each tick does. Resolves when their runs end. */
  tick(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The local stand-in for EventBridge Scheduler: polls the schedule records and fires those due
 * through the same `runScheduledTask` the cron Lambda calls. Firings are claimed with a
 * conditional write, so two local processes on one data folder cannot double-run a schedule.
 * Each tick also goes on from the agent's questions whose time ran out (what a one-time
 * schedule per question does in AWS).
 */
export function startLocalScheduler(
  deps: Pick<Deps, 'schedules' | 'clock' | 'log'> & ScheduleRunDeps & QuestionTimeoutDeps,
  opts: {
    tickMs: number;
    /** How a firing reaches the code that runs it (the local stack runs it as the cron function); default: directly. */
    invoke?: <T>(run: () => Promise<T>) => Promise<T>;
  },
): LocalScheduler {
  const invoke = opts.invoke ?? (<T>(run: () => Promise<T>) => run());
  const running = new Set<Promise<unknown>>();
  let ticking: Promise<void> | undefined;

  const tick = async () => {
    const due = await deps.schedules.listDue(deps.clock());
    for (const schedule of due) {
      const firedAt = new Date(schedule.nextRunAt!).toISOString();
      const run = invoke(() => runScheduledTask(deps, { kind: 'scheduled_task', scheduleId: schedule.scheduleId, firedAt })).catch((err: unknown) =>
        deps.log.error('scheduled run failed', { scheduleId: schedule.scheduleId, error: errorMessage(err) }),
      );
      running.add(run);
      void run.finally(() => running.delete(run));
    }
    await invoke(() => sweepExpiredQuestions(deps));
    await Promise.all([...running]);
  };

  const timer = setInterval(() => {
    if (ticking) return;
    ticking = tick()
      .catch((err: unknown) => deps.log.error('scheduler tick failed', { error: errorMessage(err) }))
      .finally(() => (ticking = undefined));
  }, opts.tickMs);

  return {
    tick,
    async stop() {
      clearInterval(timer);
      await ticking;
      await Promise.all([...running]);
    },
  };
}
