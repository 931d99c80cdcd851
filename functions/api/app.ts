import { agentRoutes } from './routes/agents.ts';
import { OpenAPIHono } from '@hono/zod-openapi';
import { cors } from 'hono/cors';
import type { Deps } from '../deps/deps.ts';
import { bearerAuth } from './auth.ts';
import { createTokenAuth } from './token-auth.ts';
import { adminTokenRoutes } from './routes/admin-tokens.ts';
import { adminGithubRoutes } from './routes/admin-github.ts';
import { adminAsyncFailureRoutes } from './routes/admin-async-failures.ts';
import { githubInstallationRoutes, githubSetupRoutes } from './routes/github-installations.ts';
import { limitRequestBodies } from './body-limit.ts';
import { serveConsole } from './console-assets.ts';
import { errorResponse } from './error-response.ts';
import { idempotency } from './idempotency.ts';
import { createAllowedMethods, noRoute } from './method-not-allowed.ts';
import { serveOpenApiDocument } from './openapi-document.ts';
import type { ApiEnv } from './route-app.ts';
import { githubRoutes, githubWebhookRoutes } from './routes/github.ts';
import { githubEnvironmentRoutes } from './routes/github-environment.ts';
import { scheduleRoutes } from './routes/schedules.ts';
import { tenantSettingsRoutes } from './routes/tenant-settings.ts';
import { contextRoutes } from './routes/context.ts';
import { sessionRoutes } from './routes/sessions.ts';
import { sessionAdminRoutes } from './routes/session-admin.ts';
import { turnEventRoutes } from './routes/turn-events.ts';
import { permissionRoutes } from './routes/permissions.ts';
import { questionRoutes } from './routes/questions.ts';
import { planRoutes } from './routes/plans.ts';
import { turnRoutes } from './routes/turns.ts';
import { turnControlRoutes } from './routes/turn-control.ts';
import { workspaceRoutes } from './routes/workspace.ts';
import { authorizationHeader } from './auth-header.ts';
import { requestLog } from './request-log.ts';
import { workspaceUploadRoutes } from './routes/workspace-uploads.ts';
import { toolResultRoutes } from './routes/tool-results.ts';
import { workspaceDiffRoutes } from './routes/workspace-diff.ts';
import { mcpRoutes } from './mcp/mcp-route.ts';
import { a2aRoutes } from './a2a/a2a-route.ts';

/** The API's version, as the OpenAPI document states it. */
export const API_VERSION = '1.0.0';

/**
 * The HTTP API. The same app runs on Lambda (Function URL, streaming) and in the local stack.
 * `consoleDir`: the web console's built files, served at /console (functions/api/console-assets.ts).
 */
export function createApp(deps: Deps, opts: { consoleDir?: string } = {}) {
  const app = new OpenAPIHono<ApiEnv>();
  app.use('*', requestLog(deps.log));
  // Every body is capped by its route's declared limit as it arrives, before anything reads it.
  app.use('*', limitRequestBodies());

  // Browsers on the configured origins may call the API; their preflights are answered here,
  // before auth (a preflight carries no token).
  const origins = deps.config.api.corsOrigins;
  if (origins.length > 0) app.use('*', corsFor(origins));

  mountOpenRoutes(app, deps, opts.consoleDir);

  // Token administration has its own auth (the admin token) and no Idempotency-Key (a replay would keep a plaintext token): mounted before /v1's middleware.
  const tokens = createTokenAuth(deps, deps.config.apiTokens);
  app.route('/v1/admin', adminTokenRoutes(deps, tokens));
  app.route('/v1/admin', adminGithubRoutes(deps, tokens));
  app.route('/v1/admin', adminAsyncFailureRoutes(deps, tokens));
  // The remote-agent protocols, on the same tokens and tenants as /v1 (docs/api.md, "Remote agents").
  app.route('/', mcpRoutes(deps, tokens));
  app.route('/', a2aRoutes(deps, tokens, API_VERSION));

  const v1 = new OpenAPIHono<ApiEnv>();
  v1.use('*', bearerAuth(tokens));
  // A replayed streaming answer follows the same turn's events from the start.
  v1.use(
    '*',
    idempotency(deps, {
      followStream: async (c, url) =>
        app.fetch(
          new Request(new URL(url, c.req.url), { headers: { authorization: authorizationHeader((name) => c.req.header(name)), accept: 'text/event-stream' } }),
          c.env,
        ),
    }),
  );
  mountTenantRoutes(v1, deps);
  app.route('/v1', v1);

  const allowed = createAllowedMethods(app);
  app.notFound((c) => noRoute(c, allowed));

  app.onError((err, c) => errorResponse(err, c, deps.log));

  return app;
}

/** What needs no bearer token: registered before /v1's auth. */
function mountOpenRoutes(app: OpenAPIHono<ApiEnv>, deps: Deps, consoleDir: string | undefined): void {
  app.get('/healthz', (c) => c.json({ ok: true }));
  // The document and its reference page (/docs).
  serveOpenApiDocument(app, API_VERSION);
  // Static files; the console signs in with a token and calls /v1 like any client.
  serveConsole(app, consoleDir);
  // Signed by GitHub, not bearer-authenticated.
  app.route('/', githubWebhookRoutes(deps));
  // GitHub's redirect after an App installation: the signed state is the proof, not a bearer token.
  app.route('/', githubSetupRoutes(deps));
}

/** The routes a tenant token opens, under /v1. */
function mountTenantRoutes(v1: OpenAPIHono<ApiEnv>, deps: Deps): void {
  for (const routes of [
    sessionRoutes,
    sessionAdminRoutes,
    turnRoutes,
    turnEventRoutes,
    turnControlRoutes,
    permissionRoutes,
    questionRoutes,
    planRoutes,
    contextRoutes,
    workspaceRoutes,
    workspaceUploadRoutes,
    workspaceDiffRoutes,
    agentRoutes,
    toolResultRoutes,
  ]) {
    v1.route('/sessions', routes(deps));
  }
  v1.route('/schedules', scheduleRoutes(deps));
  v1.route('/tenant', tenantSettingsRoutes(deps));
  v1.route('/github', githubRoutes(deps));
  v1.route('/github', githubEnvironmentRoutes(deps));
  v1.route('/github', githubInstallationRoutes(deps));
}

function corsFor(origins: readonly string[]) {
  return cors({
    origin: origins.includes('*') ? '*' : [...origins],
    allowHeaders: ['authorization', 'content-type', 'last-event-id', 'accept', 'idempotency-key', 'prefer', 'x-amz-content-sha256'],
    exposeHeaders: ['retry-after', 'x-claude-session-id', 'x-content-sha256', 'location', 'content-location', 'preference-applied', 'idempotent-replayed'],
    maxAge: 600,
  });
}

/**
 * The app behind the public webhook URL of a stack with a custom domain: there the API's own
 * Function URL only answers CloudFront's signed requests, and GitHub cannot sign its
 * deliveries, so a second URL (on the function's `webhook` alias) receives them. It serves the
 * webhook route and nothing else: the rest of the API stays reachable only through CloudFront.
 */
export function createWebhookApp(deps: Deps) {
  const app = new OpenAPIHono<ApiEnv>();
  app.use('*', requestLog(deps.log));
  app.use('*', limitRequestBodies());
  app.get('/healthz', (c) => c.json({ ok: true }));
  app.route('/', githubWebhookRoutes(deps));
  const allowed = createAllowedMethods(app);
  app.notFound((c) => noRoute(c, allowed));
  app.onError((err, c) => errorResponse(err, c, deps.log));
  return app;
}
