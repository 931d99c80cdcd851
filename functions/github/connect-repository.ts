import type { Deps } from '../deps/deps.ts';
import type { GithubLookupAnswer } from '../github-api/github-lookup.ts';
import { NOT_CONFIGURED } from '../github-api/github-client.ts';
import { ConflictError, ForbiddenError, NotFoundError, UserError } from '../shared/errors.ts';
import { connectionKey, type GithubRepoRecord } from '../stores/github-store.ts';

export type ConnectDeps = Pick<Deps, 'config' | 'github' | 'githubInstallations' | 'githubDispatch' | 'clock'>;

/** What a connection asks for, besides the repository: how runs start and are set up. */
export type ConnectionSettings = Pick<GithubRepoRecord, 'label' | 'mention' | 'allowBots' | 'settings'>;

/**
 * Connects `fullName` to `tenantId` once the deployment has seen proof that the tenant controls
 * it (docs/security.md, "Who may connect a repository"):
 * - with a GitHub App, the repository must be in the repository list of an installation the
 *   tenant claimed; the connection records the repository's id and that installation;
 * - with one plain token, nothing shows which tenant controls what: only the admin connects
 *   (`by: 'admin'`), naming the tenant, and the connection records the repository's id.
 * A tenant that cannot prove control gets the same 403 whether or not anyone connected the
 * repository; 409 `repository_connected` is only ever said to the tenant that holds it.
 */
export async function connectRepository(
  deps: ConnectDeps,
  request: { tenantId: string; fullName: string; by: 'tenant' | 'admin' } & ConnectionSettings,
): Promise<GithubRepoRecord> {
  const { tenantId, fullName } = request;
  // Without the webhook secret no delivery is ever accepted (and in AWS there is no worker to ask).
  if (!deps.config.github.webhookSecret) throw new NotFoundError('GitHub is not configured on this deployment (STRATUS_GITHUB_WEBHOOK_SECRET).');
  const claims = await deps.githubInstallations.listForTenant(tenantId);
  const answer = await deps.githubDispatch.lookup({ type: 'repository', fullName, installationIds: claims.map((c) => Number(c.installationId)).slice(0, 100) });
  const found = provenRepository(answer, request);
  const now = new Date(deps.clock()).toISOString();
  const record: GithubRepoRecord = {
    repository: connectionKey(found.id),
    fullName: found.fullName,
    tenantId,
    repositoryId: found.id,
    ...(found.installationId !== undefined ? { installationId: found.installationId } : {}),
    createdAt: now,
    updatedAt: now,
    label: request.label,
    mention: request.mention,
    allowBots: request.allowBots,
    ...(request.settings ? { settings: request.settings } : {}),
  };
  if (!(await deps.github.createRepo(record))) await takeOverOrRefuse(deps, record, request);
  // A connection of the same name from before ids were recorded (whoever made it) never routes again.
  const legacy = await deps.github.getLegacyRepo(fullName);
  if (legacy) await deps.github.deleteRepo(legacy.repository);
  return record;
}

/** The repository as GitHub showed it to the proof this deployment accepts, or the refusal. */
function provenRepository(answer: GithubLookupAnswer, request: { tenantId: string; fullName: string; by: 'tenant' | 'admin' }) {
  if (answer.mode === 'none') throw new UserError(`Repositories cannot be connected: ${NOT_CONFIGURED}`, 'github_not_configured');
  if (answer.mode === 'token' && request.by === 'tenant') {
    throw new ForbiddenError(
      'This deployment reaches GitHub with one token (STRATUS_GITHUB_TOKEN), which cannot show that this tenant controls a repository, so only the admin connects repositories: POST /v1/admin/github/repositories {tenantId, repository}.',
    );
  }
  if (answer.repository) return answer.repository;
  if (answer.mode === 'token') throw new NotFoundError(`GitHub shows no repository ${request.fullName} to this deployment's token.`);
  throw notProven(request);
}

/** The one answer to a tenant without proof, whether or not the repository is connected elsewhere. */
function notProven(request: { tenantId: string; fullName: string; by: 'tenant' | 'admin' }): ForbiddenError {
  const who = request.by === 'tenant' ? 'this tenant has' : `tenant ${request.tenantId} has`;
  return new ForbiddenError(
    `Repository ${request.fullName} is not in the repository list of any GitHub App installation ${who} claimed. Install the App on it (POST /v1/github/installations/setup-url gives the link) or have an admin assign the installation (POST /v1/admin/github/installations).`,
  );
}

/**
 * The repository id is connected already. Its own tenant is told so (409); a connection whose
 * installation claim has since moved to another tenant is stale and is replaced by the tenant
 * that proved control now; anyone else gets the refusal a stranger gets.
 */
async function takeOverOrRefuse(
  deps: ConnectDeps,
  record: GithubRepoRecord,
  request: { tenantId: string; fullName: string; by: 'tenant' | 'admin' },
): Promise<void> {
  const existing = await deps.github.getRepoById(record.repositoryId!);
  if (existing?.tenantId === record.tenantId)
    throw new ConflictError(`Repository ${existing.fullName} is already connected to this tenant.`, 'repository_connected');
  const stale = existing?.installationId !== undefined && !(await deps.githubInstallations.heldBy(existing.installationId, existing.tenantId));
  if (existing && !stale && request.by === 'admin') {
    throw new ConflictError(`Repository ${existing.fullName} is connected to tenant ${existing.tenantId}; disconnect it there first.`, 'repository_connected');
  }
  if (existing && !stale) throw notProven(request);
  await deps.github.putRepo(record);
}
