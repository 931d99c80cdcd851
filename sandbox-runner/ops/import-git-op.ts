import { z } from 'zod';
import { GitCloneError, gitClone } from '../workspace/git-clone.ts';
import { defineOp } from './op.ts';
import { ToolInputError } from './op-context.ts';

export interface ImportGitResult {
  type: 'import_git';
  url: string;
  ref?: string;
  depth: number;
}

/** Fills an empty workspace with a git clone (shallow unless `depth` is 0). */
export const importGitOp = defineOp({
  schema: z.object({
    type: z.literal('import_git'),
    url: z.string().min(1),
    ref: z.string().min(1).optional(),
    depth: z.number().int().min(0).default(1),
    token: z.string().min(1).optional(),
  }),
  mutatesWorkspace: true,
  async run(ctx, op) {
    if (ctx.request.workspace.version !== 0) throw new ToolInputError('A repository can only be cloned into an empty workspace (version 0).');
    try {
      await gitClone(ctx.paths.root, {
        url: op.url,
        ref: op.ref,
        depth: op.depth,
        token: op.token,
        allowHttp: ctx.git.allowHttp,
        timeoutMs: ctx.git.timeoutMs,
        scratchDir: ctx.tmpDir,
      });
    } catch (err) {
      if (err instanceof GitCloneError) throw new ToolInputError(err.message);
      throw err;
    }
    const result: ImportGitResult = { type: 'import_git', url: op.url, ...(op.ref ? { ref: op.ref } : {}), depth: op.depth };
    return { result };
  },
});
