import path from 'node:path';
import { VIRTUAL_ROOT } from '../../common/virtual-paths.ts';
import type { OpContext } from '../op-context.ts';

/** Turns ripgrep's real paths back into the model's view: relative to the cwd when inside it. */
export function createSearchPathMapper(ctx: OpContext, realRoot: string) {
  const cwd = ctx.request.cwd;
  const toVirtual = (p: string): string => (p === realRoot ? VIRTUAL_ROOT : p.startsWith(`${realRoot}/`) ? `${VIRTUAL_ROOT}${p.slice(realRoot.length)}` : p);
  return {
    toVirtual,
    /** Relative to the cwd, unless that needs `..` (then absolute). */
    relative(virtualPath: string): string {
      const rel = path.posix.relative(cwd, virtualPath);
      return rel.startsWith('..') ? virtualPath : rel;
    },
    /** Rewrites the real root at the start of a line of ripgrep output. */
    lineToVirtual(line: string): string {
      return line.startsWith(`${realRoot}/`) ? `${VIRTUAL_ROOT}${line.slice(realRoot.length)}` : line;
    },
  };
}
