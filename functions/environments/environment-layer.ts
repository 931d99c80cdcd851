import type { EnvironmentScope } from './environment-scope.ts';

/**
 * The cached environment layer: what set-up steps produced, kept per repository and set-up
 * fingerprint and restored before the next session's set-up. The cached layer is added by the
 * environment-layer change; until then nothing is cached, every restore answers
 * `{ restored: false }` and every save keeps nothing, so set-up steps always run in full.
 */
export type EnvironmentLayerDeps = object;

export interface RestoreOutcome {
  /** True when a layer was put into the workspace and the set-up steps may be skipped. */
  restored: boolean;
}

export async function restoreCachedEnvironment(_deps: EnvironmentLayerDeps, _scope: EnvironmentScope): Promise<RestoreOutcome> {
  return { restored: false };
}

export async function saveCachedEnvironment(_deps: EnvironmentLayerDeps, _scope: EnvironmentScope): Promise<void> {
  // Nothing is kept until the cached layer exists (see above).
}
