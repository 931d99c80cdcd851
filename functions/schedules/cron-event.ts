import { questionTimeoutEventSchema } from '../deps/question-timers.ts';
import { resumeExpiredQuestions, type QuestionTimeoutDeps } from './question-timeouts.ts';
import { handleScheduledEvent, type ScheduleRunDeps } from './run-schedule.ts';

/**
 * What the cron function does with an event from EventBridge Scheduler: a schedule's firing, or
 * a question's one-time timer. A timer that fires after the question was answered (or twice)
 * finds nothing to close and nothing to resume, and does nothing.
 */
export async function handleCronEvent(deps: ScheduleRunDeps & QuestionTimeoutDeps, event: unknown, deadlineAt?: number): Promise<unknown> {
  const timeout = questionTimeoutEventSchema.safeParse(event);
  if (timeout.success) return resumeExpiredQuestions(deps, timeout.data.sessionId, deadlineAt);
  return handleScheduledEvent(deps, event, deadlineAt);
}
