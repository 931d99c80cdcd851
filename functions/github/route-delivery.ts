import type { Deps } from '../deps/deps.ts';
import type { DeliveredRepository } from '../github-api/github-trigger.ts';
import type { Logger } from '../shared/logger.ts';
import { connectionKey, type GithubRepoRecord } from '../stores/github-store.ts';

export type RouteDeps = Pick<Deps, 'github' | 'githubInstallations' | 'clock'>;

/**
 * The connection a signed delivery belongs to, found by the repository's id, never its name:
 * a repository renamed keeps its connection (the new name is recorded), and another repository
 * that takes over an old name does not reach it. A connection made through an installation
 * takes only deliveries through that installation, and only while its tenant still claims it.
 * Connections from before ids were recorded are moved to their id by the first delivery that
 * comes through an installation their tenant claims; without one they route nothing.
 */
export async function connectionForDelivery(deps: RouteDeps, delivered: DeliveredRepository, log: Logger): Promise<GithubRepoRecord | { ignored: string }> {
  const repo = await deps.github.getRepoById(delivered.id);
  if (repo) {
    if (repo.installationId !== undefined && !(await throughClaimedInstallation(deps, repo, delivered))) {
      log.warn('webhook delivery for a connected repository through an installation its tenant does not claim; ignored', {
        repositoryId: delivered.id,
        installationId: delivered.installationId ?? null,
      });
      return { ignored: 'repository not connected' };
    }
    if (repo.fullName !== delivered.fullName) {
      await deps.github.renameRepo(repo.repository, delivered.fullName, new Date(deps.clock()).toISOString());
      log.info('connected repository renamed on GitHub; the new name is recorded', { repositoryId: delivered.id, from: repo.fullName, to: delivered.fullName });
      return { ...repo, fullName: delivered.fullName };
    }
    return repo;
  }
  return migrateLegacy(deps, delivered, log);
}

/** True when the delivery came through the connection's installation and its tenant claims it still. */
async function throughClaimedInstallation(deps: RouteDeps, repo: GithubRepoRecord, delivered: DeliveredRepository): Promise<boolean> {
  if (repo.installationId === undefined || delivered.installationId !== repo.installationId) return false;
  return (await deps.githubInstallations.heldBy(repo.installationId, repo.tenantId)) !== undefined;
}

/** A connection keyed by name only: moved to the delivery's repository id when the delivery proves it, else ignored. */
async function migrateLegacy(deps: RouteDeps, delivered: DeliveredRepository, log: Logger): Promise<GithubRepoRecord | { ignored: string }> {
  const legacy = await deps.github.getLegacyRepo(delivered.fullName);
  if (!legacy) return { ignored: 'repository not connected' };
  const proven = delivered.installationId !== undefined && (await deps.githubInstallations.heldBy(delivered.installationId, legacy.tenantId));
  if (!proven) {
    log.warn(
      'webhook delivery for a connection made before repository ids were recorded, not through an installation its tenant claims; ignored until it is connected again',
      { repository: delivered.fullName, tenantId: legacy.tenantId },
    );
    return { ignored: 'repository not connected' };
  }
  const moved: GithubRepoRecord = {
    ...legacy,
    repository: connectionKey(delivered.id),
    fullName: delivered.fullName,
    repositoryId: delivered.id,
    installationId: delivered.installationId,
    updatedAt: new Date(deps.clock()).toISOString(),
  };
  // Another connection of this id made meanwhile wins; the name-keyed one goes either way.
  const created = await deps.github.createRepo(moved);
  await deps.github.deleteRepo(legacy.repository);
  log.info('connection from before repository ids moved to its id', { repositoryId: delivered.id, tenantId: legacy.tenantId, moved: created });
  return created ? moved : ((await deps.github.getRepoById(delivered.id)) ?? { ignored: 'repository not connected' });
}
