import type { Context } from 'hono';

interface LambdaContextLike {
  getRemainingTimeInMillis(): number;
}

/**
 * The epoch-ms deadline of the Lambda invocation serving this request, if any. Hono's Lambda
 * adapters put the Lambda context on the env (`context` when streaming, `lambdaContext`
 * otherwise); the local Node server has none, and the turn engine then uses its configured
 * simulated budget, if any.
 */
export function invocationDeadline(c: Context): number | undefined {
  const env = c.env as { context?: LambdaContextLike; lambdaContext?: LambdaContextLike } | undefined;
  const ctx = env?.context ?? env?.lambdaContext;
  return typeof ctx?.getRemainingTimeInMillis === 'function' ? Date.now() + ctx.getRemainingTimeInMillis() : undefined;
}
