import { z } from 'zod';
import { GitCloneError } from '../workspace/git-clone.ts';
import { gitCheckout } from '../workspace/git-remote.ts';
import { withGitProxy } from './git-proxy.ts';
import { defineOp } from './op.ts';
import { ToolInputError } from '../workspace/tool-input-error.ts';

export interface GitCheckoutResult {
  type: 'git_checkout';
  /** The commit the new branch starts at. */
  sha: string;
  branch: string;
}

/**
 * Fills an empty workspace with a remote ref checked out as a new branch (GitHub runs: the
 * default branch or a pull request's head). Runs the runner's own git, outside the sandbox;
 * the token travels only in that git's environment.
 */
export const gitCheckoutOp = defineOp({
  schema: z.object({
    type: z.literal('git_checkout'),
    url: z.string().min(1),
    ref: z.string().min(1),
    branch: z.string().min(1),
    depth: z.number().int().min(0).default(1),
    token: z.string().min(1).optional(),
  }),
  mutatesWorkspace: true,
  async run(ctx, op) {
    if (ctx.request.workspace.version !== 0) throw new ToolInputError('A repository can only be checked out into an empty workspace (version 0).');
    try {
      const sha = await withGitProxy(ctx, op.url, (proxy) =>
        gitCheckout(ctx.paths.root, { ...op, allowHttp: ctx.git.allowHttp, timeoutMs: ctx.git.timeoutMs, scratchDir: ctx.tmpDir, proxy }),
      );
      const result: GitCheckoutResult = { type: 'git_checkout', sha, branch: op.branch };
      return { result };
    } catch (err) {
      if (err instanceof GitCloneError) throw new ToolInputError(err.message);
      throw err;
    }
  },
});
