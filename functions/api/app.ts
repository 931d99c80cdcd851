import { Hono } from 'hono';
import type { Deps } from '../deps/deps.ts';
import { bearerAuth, type AuthVariables } from './auth.ts';
import { errorResponse } from './error-response.ts';
import { idempotency } from './idempotency.ts';
import { githubRoutes, githubWebhookRoutes } from './routes/github.ts';
import { scheduleRoutes } from './routes/schedules.ts';
import { contextRoutes } from './routes/context.ts';
import { sessionRoutes } from './routes/sessions.ts';
import { sessionAdminRoutes } from './routes/session-admin.ts';
import { turnEventRoutes } from './routes/turn-events.ts';
import { permissionRoutes } from './routes/permissions.ts';
import { turnRoutes } from './routes/turns.ts';
import { turnControlRoutes } from './routes/turn-control.ts';
import { workspaceRoutes } from './routes/workspace.ts';

/** The HTTP API. The same app runs on Lambda (Function URL, streaming) and in the local stack. */
export function createApp(deps: Deps) {
  const app = new Hono<{ Variables: AuthVariables }>();

  app.get('/healthz', (c) => c.json({ ok: true }));
  // Signed by GitHub, not bearer-authenticated: registered before the /v1 middleware runs.
  app.route('/', githubWebhookRoutes(deps));

  const v1 = new Hono<{ Variables: AuthVariables }>();
  v1.use('*', bearerAuth(deps.config.apiTokens));
  // A replayed streaming answer follows the same turn's events from the start.
  v1.use('*', idempotency(deps, {
    followStream: async (c, url) => app.fetch(new Request(new URL(url, c.req.url), { headers: { authorization: c.req.header('authorization') ?? '', accept: 'text/event-stream' } }), c.env),
  }));
  v1.route('/sessions', sessionRoutes(deps));
  v1.route('/sessions', sessionAdminRoutes(deps));
  v1.route('/sessions', turnRoutes(deps));
  v1.route('/sessions', turnEventRoutes(deps));
  v1.route('/sessions', turnControlRoutes(deps));
  v1.route('/schedules', scheduleRoutes(deps));
  v1.route('/github', githubRoutes(deps));
  v1.route('/sessions', permissionRoutes(deps));
  v1.route('/sessions', contextRoutes(deps));
  v1.route('/sessions', workspaceRoutes(deps));
  app.route('/v1', v1);

  app.notFound((c) => c.json({ error: { code: 'not_found', message: `No route ${c.req.method} ${c.req.path}` } }, 404));

  app.onError((err, c) => errorResponse(err, c, deps.log));

  return app;
}
