import { promises as fs } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { defineOp } from './op.ts';
import { ToolInputError } from './op-context.ts';

export interface ReadResult {
  type: 'read';
  /** Virtual path of the file. */
  path: string;
  content: string;
  sizeBytes: number;
  mtimeMs: number;
}

/**
 * Reads one file of the workspace. The path is resolved through symlinks and must still land
 * inside the workspace: a link pointing out is refused, never followed.
 */
export const readOp = defineOp({
  schema: z.object({
    type: z.literal('read'),
    /** Absolute virtual path (under /workspace). */
    path: z.string(),
  }),
  mutatesWorkspace: false,
  async run(ctx, op) {
    const virtualPath = op.path;
    if (!ctx.paths.isInside(virtualPath)) {
      throw new ToolInputError(`File does not exist. Only paths under /workspace can be read: ${virtualPath}`);
    }
    const real = ctx.paths.toReal(virtualPath);
    const resolved = await fs.realpath(real).catch(() => undefined);
    if (!resolved) throw new ToolInputError(`File does not exist. Current working directory: ${ctx.request.cwd}`);
    const root = await fs.realpath(ctx.paths.root);
    if (resolved !== root && !resolved.startsWith(`${root}${path.sep}`)) {
      throw new ToolInputError(`File does not exist. ${virtualPath} resolves outside /workspace.`);
    }
    const st = await fs.stat(resolved);
    if (st.isDirectory()) throw new ToolInputError(`EISDIR: illegal operation on a directory, read '${virtualPath}'`);
    if (!st.isFile()) throw new ToolInputError(`Cannot read ${virtualPath}: not a regular file.`);
    if (st.size > ctx.limits.maxReadBytes) {
      throw new ToolInputError(`File ${virtualPath} is ${st.size} bytes, more than the ${ctx.limits.maxReadBytes} bytes the runner reads at once.`);
    }
    const content = await fs.readFile(resolved, 'utf8');
    const result: ReadResult = { type: 'read', path: path.posix.normalize(virtualPath), content, sizeBytes: st.size, mtimeMs: st.mtimeMs };
    return { result };
  },
});
