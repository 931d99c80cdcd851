import path from 'node:path';

/** The workspace as the model sees it. */
export const VIRTUAL_ROOT = '/workspace';

/**
 * The model sees its workspace at `/workspace`, whatever directory the runner really uses, so
 * prompts stay byte-stable across runners. These map between the two views.
 */
export interface PathMapper {
  /** Real directory backing /workspace. */
  readonly root: string;
  toReal(virtualPath: string): string;
  toVirtual(realPath: string): string;
  /** True when the (normalised, not symlink-resolved) virtual path is inside /workspace. */
  isInside(virtualPath: string): boolean;
}

export function createPathMapper(root: string): PathMapper {
  const normalize = (p: string) => path.posix.resolve(VIRTUAL_ROOT, p);
  return {
    root,
    isInside(virtualPath) {
      const abs = normalize(virtualPath);
      return abs === VIRTUAL_ROOT || abs.startsWith(`${VIRTUAL_ROOT}/`);
    },
    toReal(virtualPath) {
      const abs = normalize(virtualPath);
      if (abs === VIRTUAL_ROOT) return root;
      if (!abs.startsWith(`${VIRTUAL_ROOT}/`)) throw new Error(`Path ${abs} is outside ${VIRTUAL_ROOT}`);
      return path.join(root, abs.slice(VIRTUAL_ROOT.length + 1));
    },
    toVirtual(realPath) {
      const rel = path.relative(root, realPath);
      if (rel === '') return VIRTUAL_ROOT;
      if (rel.startsWith('..') || path.isAbsolute(rel)) throw new Error(`Path ${realPath} is outside the workspace`);
      return path.posix.join(VIRTUAL_ROOT, rel.split(path.sep).join('/'));
    },
  };
}
