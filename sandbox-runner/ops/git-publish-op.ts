import { z } from 'zod';
import { GitCloneError } from '../workspace/git-clone.ts';
import { gitPublish, type PublishOutcome } from '../workspace/git-remote.ts';
import { withGitProxy } from './git-proxy.ts';
import { defineOp } from './op.ts';
import { ToolInputError } from '../workspace/tool-input-error.ts';

export type GitPublishResult = { type: 'git_publish' } & PublishOutcome;

/**
 * Commits the workspace on top of `base` and pushes it to `branch` (GitHub runs, after the
 * turn). The harness calls it, never the model, and under a runner tenant id of its own
 * (functions/runner-client/runner-tenant.ts), so no process a command left behind shares the
 * environment the token passes through. It reads the workspace and changes nothing in it.
 */
export const gitPublishOp = defineOp({
  schema: z.object({
    type: z.literal('git_publish'),
    url: z.string().min(1),
    base: z.string().min(1),
    branch: z.string().min(1),
    message: z.string().min(1).max(10_000),
    author: z.object({ name: z.string().min(1).max(200), email: z.string().min(1).max(200) }),
    token: z.string().min(1).optional(),
  }),
  mutatesWorkspace: false,
  async run(ctx, op) {
    try {
      const outcome = await withGitProxy(ctx, op.url, (proxy) =>
        gitPublish(ctx.paths.root, { ...op, allowHttp: ctx.git.allowHttp, timeoutMs: ctx.git.timeoutMs, scratchDir: ctx.tmpDir, proxy }),
      );
      const result: GitPublishResult = { type: 'git_publish', ...outcome };
      return { result };
    } catch (err) {
      if (err instanceof GitCloneError) throw new ToolInputError(err.message);
      throw err;
    }
  },
});
