import { promises as fs } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { seedFilesProblem } from '../common/file-keys.ts';
import { LimitExceededError } from '../workspace/limits.ts';
import { defineOp } from './op.ts';
import { ToolInputError } from '../workspace/tool-input-error.ts';

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
    // The API checked the same rules; checking again keeps a direct caller from writing outside the tree.
    const problem = seedFilesProblem(op.files);
    if (problem) throw problem.kind === 'too_large' ? new LimitExceededError(problem.message) : new ToolInputError(problem.message);
    const entries = Object.entries(op.files);
    let totalBytes = 0;
    for (const [rel, content] of entries) {
      const body = typeof content === 'string' ? Buffer.from(content, 'utf8') : Buffer.from(content.base64, 'base64');
      const real = path.join(ctx.paths.root, rel);
      await fs.mkdir(path.dirname(real), { recursive: true });
      await fs.writeFile(real, body);
      totalBytes += body.byteLength;
    }
    const result: CreateWorkspaceResult = { type: 'create_workspace', fileCount: entries.length, totalBytes };
    return { result };
  },
});
