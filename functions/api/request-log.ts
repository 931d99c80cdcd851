import { createMiddleware } from 'hono/factory';
import type { Logger } from '../shared/logger.ts';

/**
 * One line per HTTP request, when its response starts: method, path, status, time to the first
 * byte and (once auth has run) the tenant. This is the API's access log — CloudFront's and the
 * Function URL's own logs are not kept (docs/deploy.md) — and what ties a client's complaint to
 * the invocation's other lines. Streaming responses log when the stream opens.
 */
export function requestLog(log: Logger) {
  return createMiddleware<{ Variables: { tenantId?: string } }>(async (c, next) => {
    const started = performance.now();
    await next();
    log.info('request', {
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      ms: Math.round(performance.now() - started),
      ...(c.get('tenantId') ? { tenantId: c.get('tenantId') } : {}),
    });
  });
}
