import type { Context } from 'aws-lambda';
import { loadLambdaDeps } from './lambda-deps.ts';
import { handleScheduledEvent } from '../schedules/run-schedule.ts';
import { once } from './once.ts';

const deps = once(() => loadLambdaDeps(process.env));

/** Entry of the cron function, the target of every EventBridge Scheduler schedule. */
export const handler = async (event: unknown, context: Context) => {
  const ready = await deps();
  const scheduleId = typeof event === 'object' && event !== null ? (event as { scheduleId?: unknown }).scheduleId : undefined;
  ready.startInvocation({ context, correlationId: typeof scheduleId === 'string' ? scheduleId : undefined });
  return handleScheduledEvent(ready, event, Date.now() + context.getRemainingTimeInMillis());
};
