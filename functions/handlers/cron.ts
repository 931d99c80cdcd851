import type { Context } from 'aws-lambda';
import { loadLambdaDeps } from './lambda-deps.ts';
import { handleCronEvent } from '../schedules/cron-event.ts';
import { once } from './once.ts';
import { settledInvocation } from './invocation-end.ts';

const deps = once(() => loadLambdaDeps(process.env));

/** Entry of the cron function, the target of every EventBridge Scheduler schedule (schedules' firings, questions' timers). */
export const handler = async (event: unknown, context: Context) => {
  const ready = await deps();
  const fields = typeof event === 'object' && event !== null ? (event as { scheduleId?: unknown; sessionId?: unknown }) : {};
  const correlationId = fields.scheduleId ?? fields.sessionId;
  ready.startInvocation({ context, correlationId: typeof correlationId === 'string' ? correlationId : undefined });
  return settledInvocation(ready, () => handleCronEvent(ready, event, Date.now() + context.getRemainingTimeInMillis()));
};
