import { promises as fs } from 'node:fs';
import path from 'node:path';
import { VIRTUAL_ROOT } from '../../common/virtual-paths.ts';
import type { OpContext } from '../op-context.ts';
import { decodeText } from './file-text.ts';
import { importPaths } from './instruction-imports.ts';
import { resolveWorkspacePath } from './workspace-path.ts';

/** One instructions file as read for the model: its text (cut to the cap) and where it came from. */
export interface InstructionFile {
  /** Virtual path (under /workspace). */
  path: string;
  content: string;
  /** Characters of the whole file (more than `content` has when it was cut). */
  chars: number;
  truncated: boolean;
  /** The file whose `@path` brought this one in; absent for a file read in its own right. */
  importedBy?: string;
}

export interface InstructionLimits {
  /** Characters of one file that are kept; the rest is cut. */
  maxFileChars: number;
  /** Import levels below the file read in its own right (that file is level 0). */
  maxDepth: number;
}

/** Largest file looked at at all: anything bigger is not an instructions file anyone wrote by hand. */
const MAX_FILE_BYTES = 1024 * 1024;

/**
 * Reads `virtualPath` and, depth-first in the order they are named, the files its `@path`
 * imports bring in: the importing file first, then each import and its own imports. Paths are
 * relative to the importing file; `@/workspace/...` is absolute; `~` and anything outside the
 * workspace (also through a symlink) are not followed. Missing files are skipped silently; a
 * file already in `seen` (a cycle, or one imported twice) is not read again.
 */
export async function readInstructionTree(
  ctx: OpContext,
  virtualPath: string,
  limits: InstructionLimits,
  seen: Set<string>,
  at: { depth: number; importedBy?: string } = { depth: 0 },
): Promise<InstructionFile[]> {
  if (seen.has(virtualPath)) return [];
  const text = await readInstructionText(ctx, virtualPath);
  if (text === undefined) return [];
  seen.add(virtualPath);
  const cut = text.length > limits.maxFileChars;
  const file: InstructionFile = {
    path: virtualPath,
    content: cut ? text.slice(0, limits.maxFileChars) : text,
    chars: text.length,
    truncated: cut,
    ...(at.importedBy ? { importedBy: at.importedBy } : {}),
  };
  const files = [file];
  if (at.depth + 1 >= limits.maxDepth) return files;
  for (const target of importPaths(file.content)) {
    const resolved = importTarget(virtualPath, target);
    if (resolved) files.push(...(await readInstructionTree(ctx, resolved, limits, seen, { depth: at.depth + 1, importedBy: virtualPath })));
  }
  return files;
}

/** Where an import points, as a virtual path; undefined for `~` paths and anything outside the workspace. */
function importTarget(importer: string, target: string): string | undefined {
  if (target.startsWith('~')) return undefined;
  const resolved = path.posix.resolve(path.posix.dirname(importer), target);
  return resolved === VIRTUAL_ROOT || resolved.startsWith(`${VIRTUAL_ROOT}/`) ? resolved : undefined;
}

/** The file's text when it is a regular file inside the workspace of a sane size (1 MiB) without NUL bytes; otherwise undefined. */
export async function readInstructionText(ctx: OpContext, virtualPath: string): Promise<string | undefined> {
  const resolved = await resolveWorkspacePath(ctx, virtualPath);
  if (!resolved) return undefined;
  const st = await fs.stat(resolved.real).catch(() => undefined);
  if (!st?.isFile() || st.size > MAX_FILE_BYTES) return undefined;
  const bytes = await fs.readFile(resolved.real).catch(() => undefined);
  if (!bytes || bytes.includes(0)) return undefined;
  return decodeText(bytes).content;
}
