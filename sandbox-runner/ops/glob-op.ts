import { promises as fs } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { defineOp } from './op.ts';
import { ToolInputError } from '../workspace/tool-input-error.ts';
import { runRipgrep } from './files/ripgrep.ts';
import { createSearchPathMapper } from './files/search-paths.ts';
import { toolUseError } from './files/staleness.ts';
import { CWD_NOTE, resolveWorkspacePath } from './files/workspace-path.ts';

/** Widens one result to the op's result union. */
const done = (result: GlobResult) => ({ result });

export const GLOB_MAX_RESULTS = 100;

export interface GlobResult {
  type: 'glob';
  /** Paths relative to the cwd (absolute when outside it), oldest modification first. */
  filenames: string[];
  truncated: boolean;
}

/**
 * Lists files by glob (docs/tools.md, "Glob and Grep"): ripgrep's file listing with hidden files
 * shown, ignore files not applied, sorted by modification time, at most 100 results.
 */
export const globOp = defineOp({
  schema: z.object({
    type: z.literal('glob'),
    pattern: z.string(),
    path: z.string().optional(),
    limit: z.number().int().positive().default(GLOB_MAX_RESULTS),
  }),
  mutatesWorkspace: false,
  async run(ctx, op) {
    let base = ctx.request.cwd;
    if (op.path !== undefined) {
      const resolved = await resolveWorkspacePath(ctx, op.path);
      const st = resolved ? await fs.stat(resolved.real).catch(() => undefined) : undefined;
      if (!st) throw new ToolInputError(toolUseError(`Directory does not exist: ${op.path}. ${CWD_NOTE} ${ctx.request.cwd}.`));
      if (!st.isDirectory()) throw new ToolInputError(toolUseError(`Path is not a directory: ${op.path}`));
      base = resolved!.virtual;
    }
    let pattern = op.pattern;
    // An absolute pattern carries its own base directory: everything before the first wildcard.
    if (path.posix.isAbsolute(pattern)) {
      const wildcard = pattern.search(/[*?[{]/);
      const split = wildcard === -1 ? pattern.lastIndexOf('/') : pattern.slice(0, wildcard).lastIndexOf('/');
      base = pattern.slice(0, split) || '/';
      pattern = pattern.slice(split + 1);
    }
    const root = await fs.realpath(ctx.paths.root);
    const mapper = createSearchPathMapper(ctx, root);
    const baseResolved = await resolveWorkspacePath(ctx, base);
    if (!baseResolved) return done({ type: 'glob', filenames: [], truncated: false });
    const realBase = path.join(root, path.relative(ctx.paths.root, baseResolved.real));
    const lines = await runRipgrep(['--files', '--glob', pattern, '--sort=modified', '--no-ignore', '--hidden', realBase], { cwd: root });
    const files = lines.map((l) => mapper.relative(mapper.toVirtual(path.isAbsolute(l) ? l : path.join(realBase, l))));
    const result: GlobResult = { type: 'glob', filenames: files.slice(0, op.limit), truncated: files.length > op.limit };
    return { result };
  },
});
