import type { InvocationClock } from './continue-turn.ts';

/**
 * On Lambda, `hono/aws-lambda` hands the app `{ event, requestContext, context }` as its env
 * (`c.env`), where `context` is the Lambda context. This reads the invocation's deadline from
 * it, so the turn engine can checkpoint before the function is cut off. Undefined off Lambda
 * (the local stack has no deadline).
 */
export function invocationClockFromEnv(env: unknown): InvocationClock | undefined {
  const context = (env as { context?: { getRemainingTimeInMillis?: unknown } } | undefined)?.context;
  const remaining = context?.getRemainingTimeInMillis;
  if (typeof remaining !== 'function') return undefined;
  return { remainingTimeMs: () => (remaining as () => number).call(context) };
}
