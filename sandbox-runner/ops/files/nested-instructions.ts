import path from 'node:path';
import { VIRTUAL_ROOT } from '../../common/virtual-paths.ts';
import type { OpContext } from '../op-context.ts';
import { readInstructionTree, type InstructionFile, type InstructionLimits } from './instruction-files.ts';

/** What the harness asks a Read to bring along: instructions files in the directories above the file. */
export interface NestedInstructionsRequest {
  /** File names looked for in each directory (CLAUDE.md, AGENTS.md). */
  names: string[];
  /** Virtual paths the session already has: not read again. */
  skip: string[];
  limits: InstructionLimits;
}

/**
 * The instructions files in the directories between the workspace root (whose own files every
 * turn already carries) and the file read, outermost first, each with its imports; none that
 * the session already has.
 */
export async function nestedInstructions(ctx: OpContext, fileVirtualPath: string, request: NestedInstructionsRequest): Promise<InstructionFile[]> {
  const seen = new Set(request.skip);
  const dirs: string[] = [];
  for (let dir = path.posix.dirname(fileVirtualPath); dir.startsWith(`${VIRTUAL_ROOT}/`); dir = path.posix.dirname(dir)) dirs.unshift(dir);
  const files: InstructionFile[] = [];
  for (const dir of dirs) {
    for (const name of request.names) files.push(...(await readInstructionTree(ctx, path.posix.join(dir, name), request.limits, seen)));
  }
  return files;
}
