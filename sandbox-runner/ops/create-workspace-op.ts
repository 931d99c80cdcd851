import { promises as fs } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { defineOp } from './op.ts';
import { ToolInputError } from './op-context.ts';

export const MAX_SEED_FILES = 10_000;

export interface CreateWorkspaceResult {
  type: 'create_workspace';
  fileCount: number;
  totalBytes: number;
}

/** Writes the seed files into an empty workspace (the runner then publishes version 1). */
export const createWorkspaceOp = defineOp({
  schema: z.object({
    type: z.literal('create_workspace'),
    /** Relative paths → UTF-8 text or `{ base64 }`. */
    files: z.record(z.string(), z.union([z.string(), z.object({ base64: z.string() })])),
  }),
  mutatesWorkspace: true,
  async run(ctx, op) {
    if (ctx.request.workspace.version !== 0) throw new ToolInputError('create_workspace needs version 0 (an empty workspace).');
    const entries = Object.entries(op.files);
    if (entries.length > MAX_SEED_FILES) throw new ToolInputError(`Too many files: ${entries.length} (at most ${MAX_SEED_FILES}).`);
    let totalBytes = 0;
    for (const [rel, content] of entries) {
      const normalized = path.posix.normalize(rel);
      if (rel === '' || path.posix.isAbsolute(rel) || normalized.startsWith('..') || normalized === '.') {
        throw new ToolInputError(`Invalid file path "${rel}": use a relative path inside the workspace.`);
      }
      const body = typeof content === 'string' ? Buffer.from(content, 'utf8') : Buffer.from(content.base64, 'base64');
      const real = path.join(ctx.paths.root, normalized);
      await fs.mkdir(path.dirname(real), { recursive: true });
      await fs.writeFile(real, body);
      totalBytes += body.byteLength;
    }
    const result: CreateWorkspaceResult = { type: 'create_workspace', fileCount: entries.length, totalBytes };
    return { result };
  },
});
