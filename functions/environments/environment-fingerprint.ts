import { createHash } from 'node:crypto';

/**
 * What a cached environment is keyed by (docs/workspaces.md, "The cached environment"): the
 * set-up script exactly as it runs and every lockfile of the workspace (its path and the SHA-256
 * of its content, as the runner records them: sandbox-runner/common/environment-rules.ts says
 * which files count). Change either and the fingerprint changes, so the next set-up runs in full
 * and builds a new layer; the old one is dropped when the new one is stored.
 */
export function environmentFingerprint(setupScript: string, lockfiles: Record<string, string>): string {
  const hash = createHash('sha256');
  hash.update('stratus-environment-v1\n');
  hash.update(`script ${createHash('sha256').update(setupScript).digest('hex')}\n`);
  for (const p of Object.keys(lockfiles).sort()) hash.update(`lock ${JSON.stringify(p)} ${lockfiles[p]}\n`);
  return hash.digest('hex');
}
