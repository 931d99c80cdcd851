import path from 'node:path';

/**
 * The model's view of paths, shared by both sides: the runner maps it onto its real directory,
 * the harness reasons about it (Bash's cwd, read-only commands). It imports nothing but
 * node:path, so the harness can use it without loading the runner.
 */

/** The workspace as the model sees it. */
export const VIRTUAL_ROOT = '/workspace';

/**
 * Whether a virtual path lies in /workspace (the root itself included). A relative path counts
 * from /workspace; `.` and `..` are resolved first, symlinks are not (the runner checks real
 * paths separately). The one "inside the workspace" test in the code base.
 */
export function isInsideWorkspace(virtualPath: string): boolean {
  const abs = path.posix.resolve(VIRTUAL_ROOT, virtualPath);
  return abs === VIRTUAL_ROOT || abs.startsWith(`${VIRTUAL_ROOT}/`);
}

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
    isInside: isInsideWorkspace,
    toReal(virtualPath) {
      const abs = normalize(virtualPath);
      if (!isInsideWorkspace(abs)) throw new Error(`Path ${abs} is outside ${VIRTUAL_ROOT}`);
      if (abs === VIRTUAL_ROOT) return root;
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
