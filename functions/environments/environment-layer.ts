import type { S3Client } from '@aws-sdk/client-s3';
import { environmentLayerKey, environmentPrefix, type LayerRepository } from '../../sandbox-runner/common/environment-layer-key.ts';
import type { EnvironmentSaveResult, LayerOutcome, StorageCredentials } from '../../sandbox-runner/protocol.ts';
import type { WorkspaceClientDeps } from '../runner-client/workspace-client.ts';
import type { WorkspaceSession } from '../runner-client/workspace-session.ts';
import { errorMessage } from '../shared/errors.ts';
import { deletePrefix } from '../stores/delete-prefix.ts';
import type { EnvironmentRef, SessionStore } from '../stores/session-store.ts';
import { environmentFingerprint } from './environment-fingerprint.ts';
import type { EnvironmentScope } from './environment-scope.ts';

/**
 * The cached environment (docs/workspaces.md, "The cached environment"): what the set-up steps
 * installed, kept as one layer per repository and set-up fingerprint and restored before the next
 * session's set-up, so a second GitHub run on a repository starts with its dependencies installed.
 * The runner does the work (sandbox-runner/workspace/environment-layer.ts); this side computes the
 * fingerprint, names the tenant-scoped key, records it on the session, and drops stale layers.
 */
export type EnvironmentLayerDeps = WorkspaceClientDeps &
  LayerStorageDeps & {
    sessions: Pick<SessionStore, 'setEnvironment'>;
  };

/** What dropping layers needs: environment credentials and an S3 client for them. */
export type LayerStorageDeps = Pick<WorkspaceClientDeps, 'workspaceCredentials'> & {
  config: { bucket: string };
  workspaceStorage: (credentials: StorageCredentials) => Promise<S3Client>;
};

export type RestoreOutcome =
  /** The layer is in the workspace's sandbox: the set-up steps need not run. */
  | { restored: true; environment: EnvironmentRef; layer: Extract<LayerOutcome, { status: 'restored' | 'present' }> }
  /** No usable layer (none stored, or a stored one failed its guards and was dropped): run the steps, then save. */
  | { restored: false; environment: EnvironmentRef; layer: Extract<LayerOutcome, { status: 'absent' | 'refused' }> }
  /** Nothing is cached for this session (no repository, or a deployment without environment credentials). */
  | { restored: false; unavailable: string };

/**
 * Before the set-up steps: keys the session's environment by its set-up and lockfiles, records it
 * on the session (every later runner call of the session names it) and on `workspace` (the set-up's
 * own commands, whose new dependency directories become the layer), and restores a stored layer.
 */
export async function restoreCachedEnvironment(deps: EnvironmentLayerDeps, scope: EnvironmentScope, workspace: WorkspaceSession): Promise<RestoreOutcome> {
  if (!scope.repository) return { restored: false, unavailable: 'the session has no repository to cache an environment for' };
  if (!deps.workspaceCredentials.forEnvironment) return { restored: false, unavailable: 'this deployment mints no credentials for cached environments' };
  const { lockfiles } = await workspace.run({ type: 'environment_lockfiles' });
  const fingerprint = environmentFingerprint(scope.setupScript, lockfiles);
  const environment: EnvironmentRef = { key: environmentLayerKey(scope.tenantId, scope.repository, fingerprint), fingerprint };
  await deps.sessions.setEnvironment(scope.sessionId, environment);
  workspace.useEnvironment(environment);
  const { layer } = await workspace.run({ type: 'environment_restore' });
  if (layer.status === 'restored' || layer.status === 'present') return { restored: true, environment, layer };
  if (layer.status === 'refused') {
    // A layer that cannot be restored would block storing a good one (saves are create-only).
    deps.log.warn('cached environment refused; dropping it', { key: environment.key, error: layer.message });
    await dropLayers(deps, scope.tenantId, scope.repository, { only: environment.key });
  }
  return { restored: false, environment, layer };
}

export type SaveOutcome = EnvironmentSaveResult | { saved: false; reason: 'unavailable' };

/**
 * After the set-up steps succeeded: stores the layer the runner collected (create-only) and then
 * drops the repository's layers of other fingerprints, which no session will ask for again.
 */
export async function saveCachedEnvironment(deps: EnvironmentLayerDeps, scope: EnvironmentScope, workspace: WorkspaceSession): Promise<SaveOutcome> {
  if (!scope.repository || !workspace.environment) return { saved: false, reason: 'unavailable' };
  const result = await workspace.run({ type: 'environment_save' });
  if (result.saved) {
    await dropLayers(deps, scope.tenantId, scope.repository, { except: workspace.environment.key }).catch((err: unknown) => {
      deps.log.warn('could not drop stale cached environments', { error: errorMessage(err) });
    });
  }
  return result;
}

/**
 * Removes a repository's cached layers: all of them, all but `except`, or `only` one. The
 * credentials reach the one tenant's repository folder, never another's. Returns how many went.
 */
export async function dropLayers(
  deps: LayerStorageDeps,
  tenantId: string,
  repository: LayerRepository,
  which: { except?: string; only?: string } = {},
): Promise<number> {
  const source = deps.workspaceCredentials;
  if (!source.forEnvironment) return 0;
  const prefix = environmentPrefix(tenantId, repository);
  const target = which.only ?? prefix;
  const s3 = await deps.workspaceStorage(await source.forEnvironment(target, 'delete'));
  if (which.only) {
    const { DeleteObjectCommand } = await import('@aws-sdk/client-s3');
    await s3.send(new DeleteObjectCommand({ Bucket: deps.config.bucket, Key: which.only }));
    return 1;
  }
  return deletePrefix(s3, deps.config.bucket, prefix, which.except);
}
