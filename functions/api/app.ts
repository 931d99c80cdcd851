import { Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { Deps } from '../deps/deps.ts';
import { StratusError } from '../shared/errors.ts';
import { bearerAuth, type AuthVariables } from './auth.ts';
import { scheduleRoutes } from './routes/schedules.ts';
import { contextRoutes } from './routes/context.ts';
import { sessionRoutes } from './routes/sessions.ts';
import { turnEventRoutes } from './routes/turn-events.ts';
import { permissionRoutes } from './routes/permissions.ts';
import { turnRoutes } from './routes/turns.ts';
import { workspaceRoutes } from './routes/workspace.ts';

/** The HTTP API. The same app runs on Lambda (Function URL, streaming) and in the local stack. */
export function createApp(deps: Deps) {
  const app = new Hono<{ Variables: AuthVariables }>();

  app.get('/healthz', (c) => c.json({ ok: true }));

  const v1 = new Hono<{ Variables: AuthVariables }>();
  v1.use('*', bearerAuth(deps.config.apiTokens));
  v1.route('/sessions', sessionRoutes(deps));
  v1.route('/sessions', turnRoutes(deps));
  v1.route('/sessions', turnEventRoutes(deps));
  v1.route('/schedules', scheduleRoutes(deps));
  v1.route('/sessions', permissionRoutes(deps));
  v1.route('/sessions', contextRoutes(deps));
  v1.route('/sessions', workspaceRoutes(deps));
  app.route('/v1', v1);

  app.notFound((c) => c.json({ error: { code: 'not_found', message: `No route ${c.req.method} ${c.req.path}` } }, 404));

  app.onError((err, c) => {
    if (err instanceof StratusError) {
      if (err.status >= 500) deps.log.error('request failed', { path: c.req.path, error: err.message, code: err.code });
      if (err.retryAfterSeconds !== undefined) c.header('Retry-After', String(err.retryAfterSeconds));
      return c.json({ error: { code: err.code, message: err.message } }, err.status as 400);
    }
    if (err instanceof HTTPException) {
      return c.json({ error: { code: 'http_error', message: err.message } }, err.status);
    }
    deps.log.error('unhandled error', { path: c.req.path, error: err.message, stack: err.stack });
    return c.json({ error: { code: 'internal_error', message: 'Internal error; see the server logs.' } }, 500);
  });

  return app;
}
