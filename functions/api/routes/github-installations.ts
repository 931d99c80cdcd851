import { createRoute, z } from '@hono/zod-openapi';
import type { Deps } from '../../deps/deps.ts';
import { claimFromSetup, type ClaimDeps } from '../../github/claim-installation.ts';
import { signSetupState } from '../../github/setup-state.ts';
import { NotFoundError, UserError } from '../../shared/errors.ts';
import type { GithubInstallationRecord } from '../../stores/github-installation-store.ts';
import { createRouteApp } from '../route-app.ts';
import { errorResponses, idempotencyKeyHeader, json } from '../schemas/common.ts';

const tags = ['GitHub'];

export const installationSchema = z
  .object({
    installationId: z.number().int(),
    tenantId: z.string(),
    account: z.string().nullable().describe('The GitHub account the App is installed on'),
    claimedBy: z.enum(['admin', 'setup']).describe("An admin assigned it, or the App's setup flow with a signed state"),
    createdAt: z.string(),
  })
  .openapi('GithubInstallation');

export function installationView(r: GithubInstallationRecord): z.infer<typeof installationSchema> {
  return { installationId: Number(r.installationId), tenantId: r.tenantId, account: r.account ?? null, claimedBy: r.claimedBy, createdAt: r.createdAt };
}

const setupUrl = createRoute({
  method: 'post',
  path: '/installations/setup-url',
  tags,
  summary: 'A link that installs the GitHub App and claims the installation for this tenant',
  description:
    "The App's install page with a signed `state` naming this tenant (HMAC-SHA256 with a key derived from the webhook secret), good for 30 minutes. GitHub sends the browser back to the App's setup URL (`<API>/v1/github/installations/setup`) with `installation_id` and the `state`; only an installation made after the link, and claimed by no one, is claimed.",
  request: { headers: idempotencyKeyHeader },
  responses: {
    200: json(z.object({ url: z.string(), state: z.string(), expiresAt: z.string() }), 'The link'),
    ...errorResponses(400, 404, 422),
  },
});
const listInstallations = createRoute({
  method: 'get',
  path: '/installations',
  tags,
  summary: 'The GitHub App installations this tenant claimed',
  responses: { 200: json(z.object({ installations: z.array(installationSchema) }), "The tenant's installations"), ...errorResponses() },
});

/** The tenant's side of installation claims, under /v1/github (bearer auth). */
export function githubInstallationRoutes(deps: Pick<Deps, 'config' | 'githubInstallations' | 'githubDispatch' | 'clock'>) {
  const app = createRouteApp();
  app.openapi(setupUrl, async (c) => {
    const secret = deps.config.github.webhookSecret;
    if (!secret) throw new NotFoundError('GitHub is not configured on this deployment (STRATUS_GITHUB_WEBHOOK_SECRET).');
    const answer = await deps.githubDispatch.lookup({ type: 'app' });
    if (answer.mode !== 'app' || !answer.app?.url)
      throw new UserError(
        'This deployment has no GitHub App to install (STRATUS_GITHUB_APP_ID and STRATUS_GITHUB_APP_PRIVATE_KEY); with a plain token an admin connects repositories.',
        'github_app_not_configured',
      );
    const { state, expiresAt } = signSetupState(secret, c.get('tenantId'), deps.clock());
    const url = `${answer.app.url.replace(/\/$/, '')}/installations/new?state=${encodeURIComponent(state)}`;
    return c.json({ url, state, expiresAt: new Date(expiresAt).toISOString() }, 200);
  });
  app.openapi(listInstallations, async (c) => {
    const claims = await deps.githubInstallations.listForTenant(c.get('tenantId'));
    return c.json({ installations: claims.map(installationView) }, 200);
  });
  return app;
}

const setupCallback = createRoute({
  method: 'get',
  path: '/v1/github/installations/setup',
  tags,
  summary: "The GitHub App's setup URL: claims the new installation for the tenant the state names",
  description:
    "No bearer token: GitHub redirects the installer's browser here after an installation, and the signed `state` (from `POST /v1/github/installations/setup-url`) names the tenant. The installation must exist for this App (checked with the App's JWT), be made after the link and be claimed by no one.",
  security: [],
  request: {
    query: z.object({
      installation_id: z.coerce.number().int().positive().describe('The installation GitHub made'),
      state: z.string().min(1).max(2_000).describe('The state of the setup link'),
      setup_action: z.string().max(50).optional().describe('`install` or `update`, as GitHub sends it'),
    }),
  },
  responses: { 201: json(installationSchema, 'Claimed for the tenant the state names'), ...errorResponses(400, 403, 404) },
});

/** The setup redirect, outside /v1's bearer auth (the browser GitHub sends back carries no token; the state is the proof). */
export function githubSetupRoutes(deps: ClaimDeps) {
  const app = createRouteApp();
  app.openapi(setupCallback, async (c) => {
    const query = c.req.valid('query');
    const record = await claimFromSetup(deps, { installationId: query.installation_id, state: query.state });
    return c.json(installationView(record), 201);
  });
  return app;
}
