import { z } from 'zod';
import { defineOp } from './op.ts';

export interface WorkspaceFileInfo {
  /** Relative to the workspace root. */
  path: string;
  type: 'file' | 'dir' | 'symlink';
  size?: number;
  mode?: number;
  target?: string;
}

export interface ListFilesResult {
  type: 'list_files';
  files: WorkspaceFileInfo[];
}

/** Every path of the workspace version, from the runner's record of it (no tree walk). */
export const listFilesOp = defineOp({
  schema: z.object({ type: z.literal('list_files') }),
  mutatesWorkspace: false,
  async run(ctx) {
    const state = await ctx.local.readState();
    const files: WorkspaceFileInfo[] = Object.entries(state?.entries ?? {})
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([p, e]) =>
        e.type === 'file'
          ? { path: p, type: 'file', size: e.size, mode: e.mode }
          : e.type === 'dir'
            ? { path: p, type: 'dir', mode: e.mode }
            : { path: p, type: 'symlink', target: e.target },
      );
    const result: ListFilesResult = { type: 'list_files', files };
    return { result };
  },
});
