import { createRoute, z } from '@hono/zod-openapi';
import type { Deps } from '../../deps/deps.ts';
import { assignInstallation } from '../../github/claim-installation.ts';
import { connectRepository } from '../../github/connect-repository.ts';
import { NotFoundError } from '../../shared/errors.ts';
import { adminAuth } from '../auth.ts';
import { createRouteApp, jsonBodyLimit } from '../route-app.ts';
import { errorResponses, json, nextCursorSchema, pageQuerySchema } from '../schemas/common.ts';
import type { TokenAuth } from '../token-auth.ts';
import { MAX_JSON_BODY_BYTES } from '../validate.ts';
import { tenantIdSchema } from './admin-tokens.ts';
import { checkSettings, connectRepositoryBody, repositorySchema, repositoryView } from './github.ts';
import { installationSchema, installationView } from './github-installations.ts';

const tags = ['Admin'];
const installationIdSchema = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);
const assignBody = z.strictObject({ installationId: installationIdSchema, tenantId: tenantIdSchema }).openapi('AssignGithubInstallation');
const connectForTenantBody = connectRepositoryBody.extend({ tenantId: tenantIdSchema }).openapi('ConnectRepositoryForTenant');

const assign = createRoute({
  method: 'post',
  path: '/github/installations',
  tags,
  summary: 'Assign a GitHub App installation to a tenant',
  description:
    "The installation must exist for this App (checked with its JWT). One tenant per installation: another tenant's claim is a 409 until revoked; assigning it again to the same tenant answers 200.",
  middleware: [jsonBodyLimit(16 * 1024)] as const,
  request: { body: { content: { 'application/json': { schema: assignBody } }, required: true } },
  responses: {
    201: json(installationSchema, 'Assigned'),
    200: json(installationSchema, 'Already assigned to that tenant'),
    ...errorResponses(400, 403, 404, 409, 413, 415),
  },
});
const list = createRoute({
  method: 'get',
  path: '/github/installations',
  tags,
  summary: 'Every claimed installation',
  request: { query: pageQuerySchema },
  responses: {
    200: json(z.object({ installations: z.array(installationSchema), nextCursor: nextCursorSchema }), 'A page of claims'),
    ...errorResponses(400, 403),
  },
});
const revoke = createRoute({
  method: 'delete',
  path: '/github/installations/{installationId}',
  tags,
  summary: "Revoke a tenant's claim of an installation",
  description:
    'Deliveries through it stop reaching the tenant at once (routing checks the claim), and its repositories can be connected by whoever claims it next.',
  request: { params: z.object({ installationId: z.coerce.number().int().positive() }) },
  responses: { 200: json(installationSchema, 'The claim that was revoked'), ...errorResponses(403, 404) },
});
const connectForTenant = createRoute({
  method: 'post',
  path: '/github/repositories',
  tags,
  summary: 'Connect a repository to a tenant',
  description:
    'The way to connect with a plain `STRATUS_GITHUB_TOKEN` (nothing there shows which tenant controls a repository). With a GitHub App the named tenant must still have claimed an installation whose repository list holds it.',
  middleware: [jsonBodyLimit(MAX_JSON_BODY_BYTES)] as const,
  request: { body: { content: { 'application/json': { schema: connectForTenantBody } }, required: true } },
  responses: { 201: json(repositorySchema, 'The connected repository'), ...errorResponses(400, 403, 404, 409, 413, 415) },
});

/** GitHub administration with the admin token: installation claims, and connections for a tenant. */
export function adminGithubRoutes(deps: Pick<Deps, 'config' | 'github' | 'githubInstallations' | 'githubDispatch' | 'clock' | 'outbound'>, auth: TokenAuth) {
  const app = createRouteApp();
  app.use('/github/*', adminAuth(auth));
  app.openapi(assign, async (c) => {
    const { record, created } = await assignInstallation(deps, c.req.valid('json'));
    return created ? c.json(installationView(record), 201) : c.json(installationView(record), 200);
  });
  app.openapi(list, async (c) => {
    const page = await deps.githubInstallations.list(c.req.valid('query'));
    return c.json({ installations: page.items.map(installationView), nextCursor: page.nextCursor }, 200);
  });
  app.openapi(revoke, async (c) => {
    const { installationId } = c.req.valid('param');
    const released = await deps.githubInstallations.release(installationId);
    if (!released) throw new NotFoundError(`No tenant claims installation ${installationId}; GET /v1/admin/github/installations lists the claims.`);
    return c.json(installationView(released), 200);
  });
  app.openapi(connectForTenant, async (c) => {
    const { tenantId, repository, ...settings } = c.req.valid('json');
    checkSettings(deps, settings.settings);
    const record = await connectRepository(deps, { tenantId, fullName: repository, by: 'admin', ...settings });
    return c.json(repositoryView(record), 201);
  });
  return app;
}
