import { z } from 'zod';
import { defineOp } from './op.ts';

export interface DiscardCopyResult {
  type: 'discard_copy';
  /** Whether this runner held a copy of the workspace. */
  removed: boolean;
}

/**
 * Removes this runner's warm copy of the workspace (tree, tmp dir, record) without reading
 * anything from S3: a deleted session's files leave the runner's disk with the session instead
 * of waiting for eviction or the environment's end. It runs on the workspace's queue like every
 * op, so it never removes a copy under an op; a background command still running in it loses
 * its tree (its session is gone). A sandbox started ahead for the workspace goes with it.
 */
export const discardCopyOp = defineOp({
  schema: z.object({ type: z.literal('discard_copy') }),
  mutatesWorkspace: false,
  needsCopy: false,
  async run(ctx) {
    await ctx.sandbox.discardWarm?.(ctx.local.dir);
    const result: DiscardCopyResult = { type: 'discard_copy', removed: await ctx.local.discard() };
    return { result };
  },
});
