import { OpenAPIHono } from '@hono/zod-openapi';
import { cors } from 'hono/cors';
import type { Deps } from '../deps/deps.ts';
import { bearerAuth } from './auth.ts';
import { errorResponse } from './error-response.ts';
import { idempotency } from './idempotency.ts';
import { createAllowedMethods, noRoute } from './method-not-allowed.ts';
import { OPENAPI_PATH, serveOpenApiDocument } from './openapi-document.ts';
import type { ApiEnv } from './route-app.ts';
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

/** The API's version, as the OpenAPI document states it. */
export const API_VERSION = '1.0.0';

/** The HTTP API. The same app runs on Lambda (Function URL, streaming) and in the local stack. */
export function createApp(deps: Deps) {
  const app = new OpenAPIHono<ApiEnv>();

  // Browsers on the configured origins may call the API; their preflights are answered here,
  // before auth (a preflight carries no token).
  const origins = deps.config.api.corsOrigins;
  if (origins.length > 0) {
    app.use('*', cors({ origin: origins.includes('*') ? '*' : origins, allowHeaders: ['authorization', 'content-type', 'last-event-id', 'accept', 'idempotency-key', 'prefer'], exposeHeaders: ['retry-after', 'x-claude-session-id', 'x-content-sha256', 'location', 'content-location', 'preference-applied', 'idempotent-replayed'], maxAge: 600 }));
  }

  app.get('/healthz', (c) => c.json({ ok: true }));
  // The document and its reference page need no token: they are registered before /v1's auth.
  serveOpenApiDocument(app, API_VERSION);
  // The reference page's renderer is loaded when the page is first asked for (docs/deploy.md, "Cold start and bundle size").
  app.get('/docs', async (c, next) => {
    const { Scalar } = await import('@scalar/hono-api-reference');
    return Scalar<ApiEnv>({ url: OPENAPI_PATH, pageTitle: 'Stratus API' })(c, next);
  });
  // Signed by GitHub, not bearer-authenticated: registered before the /v1 middleware runs.
  app.route('/', githubWebhookRoutes(deps));

  const v1 = new OpenAPIHono<ApiEnv>();
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

  const allowed = createAllowedMethods(app);
  app.notFound((c) => noRoute(c, allowed));

  app.onError((err, c) => errorResponse(err, c, deps.log));

  return app;
}
