import { z } from 'zod';
import { isLockfilePath } from '../common/environment-rules.ts';
import { defineOp } from './op.ts';

export interface EnvironmentLockfilesResult {
  type: 'environment_lockfiles';
  /** Each lockfile of the workspace version (common/environment-rules.ts): path → SHA-256 of its content. */
  lockfiles: Record<string, string>;
}

/** More lockfiles than this are not listed: the fingerprint counts the first ones in path order. */
const MAX_LOCKFILES = 2_000;

/**
 * The lockfiles of the workspace version with their hashes, read from the runner's record (no
 * file is read): what the harness keys a cached environment by, with the set-up script.
 */
export const environmentLockfilesOp = defineOp({
  schema: z.object({ type: z.literal('environment_lockfiles') }),
  mutatesWorkspace: false,
  async run(ctx) {
    const entries = (await ctx.local.readState())?.entries ?? {};
    const lockfiles: Record<string, string> = {};
    const paths = Object.keys(entries).filter(isLockfilePath).sort().slice(0, MAX_LOCKFILES);
    for (const p of paths) {
      const e = entries[p]!;
      if (e.type === 'file') lockfiles[p] = e.sha256;
    }
    const result: EnvironmentLockfilesResult = { type: 'environment_lockfiles', lockfiles };
    return { result };
  },
});
