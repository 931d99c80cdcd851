import { OpenAPIHono } from '@hono/zod-openapi';
import { Scalar } from '@scalar/hono-api-reference';
import type { Deps } from '../deps/deps.ts';
import { bearerAuth } from './auth.ts';
import { errorResponse } from './error-response.ts';
import { OPENAPI_PATH, serveOpenApiDocument } from './openapi-document.ts';
import type { ApiEnv } from './route-app.ts';
import { scheduleRoutes } from './routes/schedules.ts';
import { contextRoutes } from './routes/context.ts';
import { sessionRoutes } from './routes/sessions.ts';
import { turnEventRoutes } from './routes/turn-events.ts';
import { permissionRoutes } from './routes/permissions.ts';
import { turnRoutes } from './routes/turns.ts';
import { workspaceRoutes } from './routes/workspace.ts';

/** The API's version, as the OpenAPI document states it. */
export const API_VERSION = '1.0.0';

/** The HTTP API. The same app runs on Lambda (Function URL, streaming) and in the local stack. */
export function createApp(deps: Deps) {
  const app = new OpenAPIHono<ApiEnv>();

  app.get('/healthz', (c) => c.json({ ok: true }));
  // The document and its reference page need no token: they are registered before /v1's auth.
  serveOpenApiDocument(app, API_VERSION);
  app.get('/docs', Scalar({ url: OPENAPI_PATH, pageTitle: 'Stratus API' }));

  const v1 = new OpenAPIHono<ApiEnv>();
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

  app.onError((err, c) => errorResponse(err, c, deps.log));

  return app;
}
