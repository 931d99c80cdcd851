import { z } from 'zod';
import { saveLayer, type SaveOutcome } from '../workspace/environment-layer.ts';
import { ToolInputError } from '../workspace/tool-input-error.ts';
import { defineOp } from './op.ts';

export type EnvironmentSaveResult = { type: 'environment_save'; roots: string[] } & SaveOutcome;

/**
 * Stores the copy's environment layer (the dependency directories the set-up steps created) as
 * one tar.gz at the request's layer key, create-only. The harness calls it once the set-up steps
 * succeeded, with credentials that may write that one key; it changes nothing in the workspace.
 */
export const environmentSaveOp = defineOp({
  schema: z.object({ type: z.literal('environment_save') }),
  mutatesWorkspace: false,
  async run(ctx) {
    const target = ctx.local.environment;
    if (!target) throw new ToolInputError('environment_save needs the request to name an environment layer.');
    const layer = (await ctx.local.readState())?.layer;
    const roots = layer?.key === target.key ? layer.roots : [];
    const outcome = await saveLayer(ctx.local.dir, ctx.local.tree, target, roots);
    if (outcome.saved) await ctx.local.markLayerStored();
    const result: EnvironmentSaveResult = { type: 'environment_save', roots, ...outcome };
    return { result };
  },
});
