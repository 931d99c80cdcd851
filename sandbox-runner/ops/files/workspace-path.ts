import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { OpContext } from '../op-context.ts';

export interface ResolvedPath {
  /** Absolute virtual path (under /workspace). */
  virtual: string;
  /** Where it really is on the runner's disk. */
  real: string;
}

/**
 * Resolves a path the model gave (absolute, or relative to the shell's cwd) to the workspace.
 * Undefined when it lands outside /workspace, directly or through a symlinked parent: such
 * files do not exist as far as the tools are concerned.
 */
export async function resolveWorkspacePath(ctx: OpContext, input: string): Promise<ResolvedPath | undefined> {
  const virtual = path.posix.resolve(ctx.request.cwd, input);
  if (!ctx.paths.isInside(virtual)) return undefined;
  const real = ctx.paths.toReal(virtual);
  const root = await fs.realpath(ctx.paths.root);
  // The deepest existing ancestor must really be inside: a link pointing out is never followed.
  let probe = real;
  for (;;) {
    const resolved = await fs.realpath(probe).catch(() => undefined);
    if (resolved !== undefined) {
      return resolved === root || resolved.startsWith(`${root}${path.sep}`) ? { virtual, real } : undefined;
    }
    const parent = path.dirname(probe);
    if (parent === probe) return undefined;
    probe = parent;
  }
}

export const CWD_NOTE = 'Note: your current working directory is';

/** "File does not exist. Note: ... Did you mean x?" — the hint names a sibling with the same stem. */
export async function missingFileMessage(ctx: OpContext, resolved: ResolvedPath | undefined, lead = 'File does not exist.'): Promise<string> {
  let message = `${lead} ${CWD_NOTE} ${ctx.request.cwd}.`;
  const similar = resolved ? await similarSibling(resolved.real) : undefined;
  if (similar) message += ` Did you mean ${similar}?`;
  return message;
}

async function similarSibling(real: string): Promise<string | undefined> {
  const dir = path.dirname(real);
  const stem = path.basename(real, path.extname(real));
  const names = await fs.readdir(dir).catch(() => [] as string[]);
  return names.find((name) => path.basename(name, path.extname(name)) === stem && path.join(dir, name) !== real);
}
