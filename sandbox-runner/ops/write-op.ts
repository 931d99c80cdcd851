import { promises as fs } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { defineOp } from './op.ts';
import { ToolInputError } from '../workspace/tool-input-error.ts';
import { fileStateEntrySchema, hashText, type FileStateEntry } from './files/file-state.ts';
import { readTextFile, writeTextFile } from './files/file-text.ts';
import { normaliseWriteContent } from './files/input-normalise.ts';
import { stalenessRefusal, toolUseError, UNEXPECTEDLY_MODIFIED_MESSAGE } from './files/staleness.ts';
import { resolveWorkspacePath } from './files/workspace-path.ts';

export interface WriteResult {
  type: 'write';
  kind: 'create' | 'update';
  path: string;
  fileState: FileStateEntry;
}

/**
 * Writes a whole file for the Write tool. An existing file must have been read and be unchanged
 * since (checked against the harness's file state, then once more just before writing). The
 * content loses trailing whitespace on each line unless the file is Markdown (as in the
 * reference); otherwise it is written as given (LF stays LF, CRLF stays CRLF); an existing
 * UTF-16LE file keeps its encoding.
 */
export const writeOp = defineOp({
  schema: z.object({
    type: z.literal('write'),
    path: z.string(),
    content: z.string(),
    known: fileStateEntrySchema.optional(),
  }),
  mutatesWorkspace: true,
  async run(ctx, op) {
    const resolved = await resolveWorkspacePath(ctx, op.path);
    if (!resolved) throw new ToolInputError(toolUseError(`Cannot write '${op.path}': only paths under /workspace can be written.`));
    const st = await fs.stat(resolved.real).catch(() => undefined);
    if (st) {
      if (!st.isFile()) throw new ToolInputError(toolUseError(stalenessRefusal(undefined, '')!));
      const refusal = stalenessRefusal(op.known, hashText((await readTextFile(resolved.real)).content));
      if (refusal) throw new ToolInputError(toolUseError(refusal));
    }
    await fs.mkdir(path.dirname(resolved.real), { recursive: true });
    // The last look before writing: something may have changed the file since validation.
    const existing = await readTextFile(resolved.real).catch(() => undefined);
    if (existing && (!op.known || op.known.hash !== hashText(existing.content))) throw new ToolInputError(UNEXPECTEDLY_MODIFIED_MESSAGE);
    const content = normaliseWriteContent(op.path, op.content);
    await writeTextFile(resolved.real, content, existing?.encoding ?? 'utf8', 'LF');
    const result: WriteResult = {
      type: 'write',
      kind: existing ? 'update' : 'create',
      path: resolved.virtual,
      fileState: { hash: hashText(content.replaceAll('\r\n', '\n')) },
    };
    return { result };
  },
});
