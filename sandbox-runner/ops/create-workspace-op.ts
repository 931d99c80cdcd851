import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { CreateWorkspaceResult } from '../protocol.ts';
import { ToolInputError, type OpContext } from './op-context.ts';

export const MAX_SEED_FILES = 10_000;

/** Writes the seed files into an empty workspace (the runner then publishes version 1). */
export async function seedWorkspace(ctx: OpContext, files: Record<string, string | { base64: string }>): Promise<CreateWorkspaceResult> {
  const entries = Object.entries(files);
  if (entries.length > MAX_SEED_FILES) throw new ToolInputError(`Too many files: ${entries.length} (at most ${MAX_SEED_FILES}).`);
  let totalBytes = 0;
  for (const [rel, content] of entries) {
    const normalized = path.posix.normalize(rel);
    if (rel === '' || path.posix.isAbsolute(rel) || normalized.startsWith('..') || normalized === '.') {
      throw new ToolInputError(`Invalid file path "${rel}": use a relative path inside the workspace.`);
    }
    const body = typeof content === 'string' ? Buffer.from(content, 'utf8') : Buffer.from(content.base64, 'base64');
    const real = path.join(ctx.paths.root, normalized);
    await fs.mkdir(path.dirname(real), { recursive: true });
    await fs.writeFile(real, body);
    totalBytes += body.byteLength;
  }
  return { type: 'create_workspace', fileCount: entries.length, totalBytes };
}
