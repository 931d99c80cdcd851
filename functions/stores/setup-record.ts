/**
 * What a session's set-up steps did, kept in the session record (`setup`). Written under the
 * first turn's lease: `running` before the command starts, then its outcome, so a set-up runs at
 * most once per session and a turn that died mid-set-up leaves `running` behind, which the next
 * turn turns into `interrupted` instead of running it again (functions/environments/setup-steps.ts).
 */
/** Where set-up commands come from, in the order they win (docs/environments.md). */
export const SETUP_SOURCES = ['session_setting', 'repository_setting', 'repository_file', 'tenant_setting'] as const;

export interface SetupRecord {
  status: 'running' | 'succeeded' | 'failed' | 'interrupted';
  /** Where the commands came from: a session's or repository's `setup.script`, the repository's `.stratus/setup.sh`, or the tenant's default. */
  source: (typeof SETUP_SOURCES)[number];
  /** The turn that ran it. */
  turnId: string;
  startedAt: string;
  endedAt?: string;
  durationMs?: number;
  /** The command's exit code (null when a signal ended it); absent when it never ran. */
  exitCode?: number | null;
  timedOut?: boolean;
  timeoutSeconds: number;
  /** The last part of the merged stdout and stderr. */
  outputTail?: string;
  /** Set when output was cut (by the runner's cap, or to keep only the tail). */
  outputTruncated?: boolean;
  /** Why it could not run, or did not finish (a runner refusal, a lost process). */
  error?: string;
  /** The hosts the set-up's commands could reach (registries plus the session's own list). */
  allowedDomains: string[];
  /** Whether a cached environment was restored before the commands ran. */
  restored?: boolean;
}
