import { z } from 'zod';
import { ArchiveError, importTarGz } from '../workspace/archive-import.ts';
import { defineOp } from './op.ts';
import { ToolInputError } from '../workspace/tool-input-error.ts';

export interface ImportArchiveResult {
  type: 'import_archive';
  files: number;
  bytes: number;
  skipped: number;
}

/** Fills an empty workspace from a tar.gz staged under the workspace's `uploads/` prefix. */
export const importArchiveOp = defineOp({
  schema: z.object({
    type: z.literal('import_archive'),
    /** Key relative to the workspace prefix. */
    key: z.string().regex(/^uploads\/[A-Za-z0-9._-]{1,200}$/),
  }),
  mutatesWorkspace: true,
  async run(ctx, op) {
    if (ctx.request.workspace.version !== 0) throw new ToolInputError('An archive can only be imported into an empty workspace (version 0).');
    const source = await ctx.remote.getSizedStream(ctx.remote.key(op.key));
    try {
      const summary = await importTarGz({ stream: source.stream, compressedBytes: source.size }, ctx.paths.root, ctx.workspaceLimits, ctx.archiveLimits);
      const result: ImportArchiveResult = { type: 'import_archive', ...summary };
      return { result };
    } catch (err) {
      if (err instanceof ArchiveError) throw new ToolInputError(err.message);
      throw err;
    }
  },
});
