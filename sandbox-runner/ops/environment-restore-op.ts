import { z } from 'zod';
import type { LayerOutcome } from '../workspace/environment-layer.ts';
import { ToolInputError } from '../workspace/tool-input-error.ts';
import { defineOp } from './op.ts';

export interface EnvironmentRestoreResult {
  type: 'environment_restore';
  /** `restored` (one GET, this call), `present` (the copy held it already), `absent` (none stored), `refused` (the archive failed its guards or limits). */
  layer: LayerOutcome;
}

/**
 * Reports the request's environment layer after materialising, which restores it when the copy
 * lacks it (workspace/local-copy.ts): the harness calls it before the set-up steps, to learn
 * whether they still need to run.
 */
export const environmentRestoreOp = defineOp({
  schema: z.object({ type: z.literal('environment_restore') }),
  mutatesWorkspace: false,
  async run(ctx) {
    const layer = ctx.local.layerOutcome;
    if (!layer) throw new ToolInputError('environment_restore needs the request to name an environment layer.');
    const result: EnvironmentRestoreResult = { type: 'environment_restore', layer };
    return { result };
  },
});
