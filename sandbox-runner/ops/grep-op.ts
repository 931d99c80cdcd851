import { promises as fs } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { defineOp } from './op.ts';
import { ToolInputError } from '../workspace/tool-input-error.ts';
import { runRipgrep } from './files/ripgrep.ts';
import { createSearchPathMapper } from './files/search-paths.ts';
import { toolUseError } from './files/staleness.ts';
import { CWD_NOTE, resolveWorkspacePath } from './files/workspace-path.ts';

/** Version-control directories never searched. */
/** Widens one result to the op's result union. */
const done = (result: GrepResult) => ({ result });

export const VCS_DIRS = ['.git', '.svn', '.hg', '.bzr', '.jj', '.sl'];
export const GREP_DEFAULT_HEAD_LIMIT = 250;

export type GrepMode = 'content' | 'files_with_matches' | 'count';

export interface GrepResult {
  type: 'grep';
  mode: GrepMode;
  /** files_with_matches: paths, newest first. */
  filenames: string[];
  /** content/count: the output lines, paths made relative. */
  lines: string[];
  numMatches: number;
  numFiles: number;
  appliedLimit?: number;
  appliedOffset?: number;
}

const grepSchema = z.object({
  type: z.literal('grep'),
  pattern: z.string(),
  path: z.string().optional(),
  glob: z.string().optional(),
  fileType: z.string().optional(),
  mode: z.enum(['content', 'files_with_matches', 'count']).default('files_with_matches'),
  before: z.number().int().nonnegative().optional(),
  after: z.number().int().nonnegative().optional(),
  context: z.number().int().nonnegative().optional(),
  lineNumbers: z.boolean().default(true),
  caseInsensitive: z.boolean().default(false),
  multiline: z.boolean().default(false),
  headLimit: z.number().int().nonnegative().optional(),
  offset: z.number().int().nonnegative().default(0),
});

/** Searches file contents with ripgrep: the flags and output shaping of docs/tools.md, "Glob and Grep". */
export const grepOp = defineOp({
  schema: grepSchema,
  mutatesWorkspace: false,
  async run(ctx, op) {
    let target = ctx.paths.toReal(ctx.request.cwd);
    if (op.path !== undefined) {
      const resolved = await resolveWorkspacePath(ctx, op.path);
      const st = resolved ? await fs.stat(resolved.real).catch(() => undefined) : undefined;
      if (!st) throw new ToolInputError(toolUseError(`Path does not exist: ${op.path}. ${CWD_NOTE} ${ctx.request.cwd}.`));
      target = resolved!.real;
    }
    const root = await fs.realpath(ctx.paths.root);
    const realTarget = path.join(root, path.relative(ctx.paths.root, target));
    const mapper = createSearchPathMapper(ctx, root);
    const lines = await runRipgrep([...ripgrepArgs(op), realTarget], { cwd: root });
    const relativeLine = (line: string, sep: number) => (sep > 0 ? mapper.relative(line.slice(0, sep)) + line.slice(sep) : line);

    if (op.mode === 'content') {
      const { items, appliedLimit } = paginate(lines.map(mapper.lineToVirtual), op.headLimit, op.offset);
      const shaped = items.map((l) => relativeLine(l, l.indexOf(':')));
      return done({ type: 'grep', mode: op.mode, filenames: [], lines: shaped, numMatches: 0, numFiles: 0, ...limits(appliedLimit, op.offset) });
    }
    if (op.mode === 'count') {
      const { items, appliedLimit } = paginate(lines.map(mapper.lineToVirtual), op.headLimit, op.offset);
      const shaped = items.map((l) => relativeLine(l, l.lastIndexOf(':')));
      let numMatches = 0;
      let numFiles = 0;
      for (const l of shaped) {
        const n = Number.parseInt(l.slice(l.lastIndexOf(':') + 1), 10);
        if (l.lastIndexOf(':') > 0 && !Number.isNaN(n)) {
          numMatches += n;
          numFiles += 1;
        }
      }
      return done({ type: 'grep', mode: op.mode, filenames: [], lines: shaped, numMatches, numFiles, ...limits(appliedLimit, op.offset) });
    }
    const withTimes = await Promise.all(lines.map(async (l) => [l, (await fs.stat(l).catch(() => undefined))?.mtimeMs ?? 0] as const));
    withTimes.sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
    const { items, appliedLimit } = paginate(
      withTimes.map(([l]) => l),
      op.headLimit,
      op.offset,
    );
    const filenames = items.map((l) => mapper.relative(mapper.toVirtual(l)));
    return done({ type: 'grep', mode: op.mode, filenames, lines: [], numMatches: 0, numFiles: filenames.length, ...limits(appliedLimit, op.offset) });
  },
});

function ripgrepArgs(op: z.output<typeof grepSchema>): string[] {
  const args = ['--hidden'];
  for (const dir of VCS_DIRS) args.push('--glob', `!${dir}`);
  args.push('--max-columns', '500');
  if (op.multiline) args.push('-U', '--multiline-dotall');
  if (op.caseInsensitive) args.push('-i');
  if (op.mode === 'files_with_matches') args.push('-l');
  else if (op.mode === 'count') args.push('-c');
  if (op.lineNumbers && op.mode === 'content') args.push('-n');
  if (op.mode === 'content') {
    if (op.context !== undefined) args.push('-C', String(op.context));
    else {
      if (op.before !== undefined) args.push('-B', String(op.before));
      if (op.after !== undefined) args.push('-A', String(op.after));
    }
  }
  // A leading dash would be read as a flag.
  if (op.pattern.startsWith('-')) args.push('-e', op.pattern);
  else args.push(op.pattern);
  if (op.fileType) args.push('--type', op.fileType);
  if (op.glob) {
    const globs: string[] = [];
    for (const part of op.glob.split(/\s+/)) {
      if (part.includes('{') && part.includes('}')) globs.push(part);
      else globs.push(...part.split(',').filter(Boolean));
    }
    for (const g of globs.filter(Boolean)) args.push('--glob', g);
  }
  return args;
}

/** `head_limit` (default 250, 0 = all) after skipping `offset`; reports the limit only when it cut something. */
function paginate<T>(items: T[], headLimit: number | undefined, offset: number): { items: T[]; appliedLimit?: number } {
  if (headLimit === 0) return { items: items.slice(offset) };
  const limit = headLimit ?? GREP_DEFAULT_HEAD_LIMIT;
  return { items: items.slice(offset, offset + limit), appliedLimit: items.length - offset > limit ? limit : undefined };
}

function limits(appliedLimit: number | undefined, offset: number): Pick<GrepResult, 'appliedLimit' | 'appliedOffset'> {
  return { ...(appliedLimit !== undefined ? { appliedLimit } : {}), ...(offset > 0 ? { appliedOffset: offset } : {}) };
}
