import { APIError, APIUserAbortError, OverloadedError, RateLimitError, ServiceUnavailableError } from '@anthropic-ai/sdk/core/error';
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { StratusError, UpstreamError } from '../shared/errors.ts';
import type { Logger } from '../shared/logger.ts';

/**
 * The one place an error becomes an HTTP answer, `{"error":{"code","message"}}`: a StratusError
 * with the status its class fixes (and `Retry-After` when it carries one), a model API failure
 * nobody handled as an UpstreamError, anything else as a 500 whose details stay in the logs.
 */
export function errorResponse(err: Error, c: Context, log: Logger): Response {
  const known = err instanceof StratusError ? err : modelFailure(err);
  if (known) {
    if (known.status >= 500) log.error('request failed', { path: c.req.path, error: known.message, code: known.code });
    if (known.retryAfterSeconds !== undefined) c.header('Retry-After', String(known.retryAfterSeconds));
    return c.json({ error: { code: known.code, message: known.message } }, known.status);
  }
  if (err instanceof HTTPException) {
    // The JSON routes' media-type check (@hono/zod-openapi) throws this one.
    if (err.status === 415)
      return c.json(
        {
          error: {
            code: 'unsupported_media_type',
            message: `Send the body as JSON with "Content-Type: application/json" (got ${JSON.stringify(c.req.header('content-type') ?? 'none')}).`,
          },
        },
        415,
      );
    return c.json({ error: { code: 'http_error', message: err.message } }, err.status);
  }
  log.error('unhandled error', { path: c.req.path, error: err.message, stack: err.stack });
  return c.json({ error: { code: 'internal_error', message: 'Internal error; see the server logs.' } }, 500);
}

/**
 * A model API error that reached a route (the summary call of `POST …/compact`; a turn turns its
 * own into `stopReason: "model_error"`): 503 when the API was overloaded or rate-limited us,
 * so trying later may work, else 502.
 */
function modelFailure(err: Error): UpstreamError | undefined {
  if (!(err instanceof APIError) || err instanceof APIUserAbortError) return undefined;
  const unavailable =
    err instanceof OverloadedError ||
    err instanceof ServiceUnavailableError ||
    err instanceof RateLimitError ||
    err.status === 529 ||
    err.type === 'overloaded_error';
  return new UpstreamError(`The model API failed: ${err.message}`, 'model_error', unavailable ? 503 : 502);
}
