import type { Deps } from '../deps/deps.ts';
import { NOT_CONFIGURED } from '../github-api/github-client.ts';
import { ConflictError, ForbiddenError, NotFoundError, UserError } from '../shared/errors.ts';
import type { GithubInstallationRecord } from '../stores/github-installation-store.ts';
import { verifySetupState } from './setup-state.ts';

export type ClaimDeps = Pick<Deps, 'config' | 'githubInstallations' | 'githubDispatch' | 'clock'>;

/** GitHub's clock and ours may differ by this much when an installation's creation time is compared with a link's. */
const CLOCK_SKEW_MS = 60_000;

/** The installation as GitHub reports it to this App, or the error that says it is not one. */
async function appInstallation(deps: ClaimDeps, installationId: number) {
  const answer = await deps.githubDispatch.lookup({ type: 'installation', installationId });
  if (answer.mode !== 'app')
    throw new UserError(
      `Installations are claimed only with a GitHub App (STRATUS_GITHUB_APP_ID and STRATUS_GITHUB_APP_PRIVATE_KEY). ${answer.mode === 'none' ? NOT_CONFIGURED : ''}`.trim(),
      'github_app_not_configured',
    );
  if (!answer.installation) throw new NotFoundError(`GitHub knows no installation ${installationId} of this deployment's App.`);
  return answer.installation;
}

/**
 * The App's setup redirect: GitHub sends the browser back with `installation_id` and the
 * `state` of the link the tenant asked for. The state is signed and names the tenant; the
 * installation must exist for this App, be created after the link was made (GitHub does not
 * sign `installation_id`, so an older installation could be anyone's) and be unclaimed. The one
 * refusal does not say which of the last two failed.
 */
export async function claimFromSetup(deps: ClaimDeps, query: { installationId: number; state: string }): Promise<GithubInstallationRecord> {
  const secret = deps.config.github.webhookSecret;
  if (!secret) throw new NotFoundError('GitHub is not configured on this deployment (STRATUS_GITHUB_WEBHOOK_SECRET).');
  const state = verifySetupState(secret, query.state, deps.clock());
  if ('refused' in state) throw new ForbiddenError(`This setup link cannot claim an installation: ${state.refused}.`);
  const installation = await appInstallation(deps, query.installationId);
  const refusal = new ForbiddenError(
    `Installation ${query.installationId} cannot be claimed with this setup link: only an installation made after the link was made, and claimed by no one, can. An admin can assign an existing installation (POST /v1/admin/github/installations).`,
  );
  if (Date.parse(installation.createdAt) < state.issuedAt - CLOCK_SKEW_MS) throw refusal;
  const claim = await claimFor(deps, installation, state.tenantId, 'setup');
  // The same tenant coming back through the redirect again (a reload) is fine.
  if ('heldBy' in claim) throw refusal;
  return claim.record;
}

/** An admin assigns an installation to a tenant; reassigning one another tenant holds means revoking it first. */
export async function assignInstallation(
  deps: ClaimDeps,
  request: { installationId: number; tenantId: string },
): Promise<{ record: GithubInstallationRecord; created: boolean }> {
  const installation = await appInstallation(deps, request.installationId);
  const claim = await claimFor(deps, installation, request.tenantId, 'admin');
  if (!('heldBy' in claim)) return claim;
  throw new ConflictError(
    `Installation ${request.installationId} is claimed by tenant ${claim.heldBy}; revoke it first (DELETE /v1/admin/github/installations/${request.installationId}).`,
    'installation_claimed',
  );
}

/**
 * Claims `installation` for `tenantId` (create-only): the new claim, the tenant's own earlier
 * claim (`created: false`), or the tenant that holds it.
 */
async function claimFor(
  deps: ClaimDeps,
  installation: Awaited<ReturnType<typeof appInstallation>>,
  tenantId: string,
  claimedBy: GithubInstallationRecord['claimedBy'],
): Promise<{ record: GithubInstallationRecord; created: boolean } | { heldBy: string | undefined }> {
  const record: GithubInstallationRecord = {
    installationId: String(installation.id),
    tenantId,
    account: installation.account,
    claimedBy,
    createdAt: new Date(deps.clock()).toISOString(),
  };
  const claim = await deps.githubInstallations.claim(record);
  if (claim.claimed) return { record, created: true };
  return claim.holder?.tenantId === tenantId ? { record: claim.holder, created: false } : { heldBy: claim.holder?.tenantId };
}
