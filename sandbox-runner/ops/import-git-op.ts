import { z } from 'zod';
import { startLoopbackDomainProxy } from '../isolation/domain-proxy.ts';
import { NO_EGRESS, NO_EGRESS_TOKEN, NO_GIT_EGRESS, proxyUrlWithToken } from '../common/egress-mode.ts';
import { cloneAllowListEntry } from '../common/clone-allow-list-entry.ts';
import { GitCloneError, gitClone } from '../workspace/git-clone.ts';
import { defineOp } from './op.ts';
import { ToolInputError } from '../workspace/tool-input-error.ts';

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
    const egress = ctx.git.egress ?? { kind: 'direct' };
    if (egress.kind === 'none') throw new ToolInputError(NO_EGRESS);
    if (egress.kind === 'mailbox') throw new ToolInputError(NO_GIT_EGRESS);
    const entry = cloneAllowListEntry(op.url);
    // Through the same allow-list proxy as commands, admitting only the clone's own host:port.
    let local: Awaited<ReturnType<typeof startLoopbackDomainProxy>> | undefined;
    let proxy: string;
    if (egress.kind === 'proxy') {
      if (!ctx.request.network.egressToken) throw new ToolInputError(NO_EGRESS_TOKEN);
      proxy = proxyUrlWithToken(egress.url, ctx.request.network.egressToken);
    } else {
      local = entry ? await startLoopbackDomainProxy([entry], ctx.git.stackEndpoints) : undefined;
      // Without an entry the URL is unusable, and gitClone refuses it before any request.
      proxy = local?.url ?? 'http://127.0.0.1:9';
    }
    try {
      await gitClone(ctx.paths.root, {
        url: op.url,
        ref: op.ref,
        depth: op.depth,
        token: op.token,
        allowHttp: ctx.git.allowHttp,
        timeoutMs: ctx.git.timeoutMs,
        scratchDir: ctx.tmpDir,
        proxy,
      });
    } catch (err) {
      if (err instanceof GitCloneError) throw new ToolInputError(err.message);
      throw err;
    } finally {
      await local?.close();
    }
    const result: ImportGitResult = { type: 'import_git', url: op.url, ...(op.ref ? { ref: op.ref } : {}), depth: op.depth };
    return { result };
  },
});
