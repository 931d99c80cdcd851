/**
 * Where cached environment layers live in the one bucket (docs/workspaces.md, "The cached
 * environment"): `environments/{tenantId}/github/{owner}/{name}/{fingerprint}.tar.gz`, one
 * object per repository and set-up fingerprint. The tenant id comes first, so a layer's key
 * (and the credentials minted for it) can only ever name the tenant's own repositories.
 */
export const ENVIRONMENTS_PREFIX = 'environments/';

/** Tenant ids as the token API issues them (functions/api/routes/admin-tokens.ts). */
const TENANT_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
/** GitHub owners and repository names, lower-cased (GitHub compares them without case). */
const OWNER = /^[a-z0-9][a-z0-9-]{0,38}$/;
const NAME = /^[a-z0-9._-]{1,100}$/;
const FINGERPRINT = /^[0-9a-f]{64}$/;

/** What the runner accepts as a layer's key: nothing outside a tenant's repository folder. */
export const ENVIRONMENT_LAYER_KEY =
  /^environments\/[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\/github\/[a-z0-9][a-z0-9-]{0,38}\/[a-z0-9._-]{1,100}\/[0-9a-f]{64}\.tar\.gz$/;

export interface LayerRepository {
  owner: string;
  name: string;
}

/** The folder holding every layer of one tenant's repository; throws for ids that could widen it. */
export function environmentPrefix(tenantId: string, repository: LayerRepository): string {
  const owner = repository.owner.toLowerCase();
  const name = repository.name.toLowerCase();
  if (!TENANT_ID.test(tenantId)) throw new Error(`Invalid tenant id for an environment layer: "${tenantId.slice(0, 100)}"`);
  if (!OWNER.test(owner) || !NAME.test(name) || name === '.' || name === '..') {
    throw new Error(`Invalid repository for an environment layer: "${owner.slice(0, 50)}/${name.slice(0, 110)}"`);
  }
  return `${ENVIRONMENTS_PREFIX}${tenantId}/github/${owner}/${name}/`;
}

export function environmentLayerKey(tenantId: string, repository: LayerRepository, fingerprint: string): string {
  if (!FINGERPRINT.test(fingerprint)) throw new Error('An environment fingerprint is 64 hex digits.');
  return `${environmentPrefix(tenantId, repository)}${fingerprint}.tar.gz`;
}
