import { z } from 'zod';
import { defineOp } from './op.ts';
import { bashSandboxSpec } from './sandbox-spec.ts';

export interface WarmResult {
  type: 'warm';
  /** Whether a sandbox now waits for the session's next Bash command (none where the runner cannot start one ahead). */
  sandbox: boolean;
}

/**
 * Gets ready for the session's first Bash command while its turn waits for the model: the copy is
 * brought to the request's version (as every op's is) and a sandbox with the session's variables
 * and network is started ahead (isolation/warm-bwrap.ts). Changes nothing, so nothing is published.
 */
export const warmOp = defineOp({
  schema: z.object({ type: z.literal('warm') }),
  mutatesWorkspace: false,
  async run(ctx) {
    const sandbox = ctx.sandbox.warm ? await ctx.sandbox.warm(bashSandboxSpec(ctx)) : false;
    const result: WarmResult = { type: 'warm', sandbox };
    return { result };
  },
});
