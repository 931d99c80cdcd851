import { createReadStream } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { keyMessage, keyProblem, showKey } from '../common/file-keys.ts';
import { defineOp } from './op.ts';
import { ToolInputError } from '../workspace/tool-input-error.ts';

export interface ExportFileResult {
  type: 'export_file';
  path: string;
  /** Key of the body in the bucket (content-addressed, so repeated exports reuse it). */
  key: string;
  size: number;
  sha256: string;
}

/** Puts one file's exact bytes where the API can stream them to a caller. */
export const exportFileOp = defineOp({
  schema: z.object({ type: z.literal('export_file'), path: z.string().min(1) }),
  mutatesWorkspace: false,
  async run(ctx, op) {
    const rel = op.path.replace(/^\/workspace\//, '');
    const problem = keyProblem(rel);
    if (problem) throw new ToolInputError(keyMessage(rel, problem));
    const entry = (await ctx.local.readState())?.entries[rel];
    if (!entry) throw new ToolInputError(`No file ${showKey(op.path)} in the workspace.`);
    if (entry.type !== 'file') throw new ToolInputError(`${showKey(op.path)} is a ${entry.type === 'dir' ? 'directory' : 'symbolic link'}, not a file.`);
    const key = ctx.remote.key(`exports/files/${entry.sha256}`);
    if (!(await ctx.remote.exists(key))) {
      await ctx.remote.put(key, createReadStream(path.join(ctx.paths.root, rel)), { contentLength: entry.size });
    }
    const result: ExportFileResult = { type: 'export_file', path: rel, key, size: entry.size, sha256: entry.sha256 };
    return { result };
  },
});
