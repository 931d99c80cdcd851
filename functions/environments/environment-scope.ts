import type { SetupRecord } from '../stores/setup-record.ts';
/**
 * What a session's environment is made for: the tenant and session it belongs to, the
 * repository it was checked out from (GitHub runs), and the set-up it was made with. The
 * set-up steps (setup-steps.ts) build one and hand it to the environment layer
 * (environment-layer.ts) before and after running the steps.
 */
export interface EnvironmentScope {
  tenantId: string;
  sessionId: string;
  /** The session's workspace (the id its runner environment and S3 prefix are keyed by). */
  workspaceId: string;
  /** The repository the workspace was checked out from; absent for sessions without one. */
  repository?: { owner: string; name: string; id?: number };
  /**
   * The set-up commands exactly as they run: the repository's `.stratus/setup.sh`, or the
   * repository's or the session's `setup` setting (docs/environments.md says which wins).
   * Part of what a cached layer is keyed by.
   */
  setupScript: string;
  /** Where `setupScript` came from. */
  setupSource: SetupRecord['source'];
}
