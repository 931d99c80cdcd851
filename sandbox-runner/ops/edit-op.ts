import { promises as fs } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { defineOp } from './op.ts';
import type { OpContext } from './op-context.ts';
import { ToolInputError } from '../workspace/tool-input-error.ts';
import { fileStateEntrySchema, hashText, type FileStateEntry } from './files/file-state.ts';
import { formatFileSize } from '../common/file-size.ts';
import { readTextFile, writeTextFile, type TextFile } from './files/file-text.ts';
import { applyReplacement, normaliseEditStrings } from './files/input-normalise.ts';
import { findActualString, preserveQuoteStyle } from './files/quotes.ts';
import { stalenessRefusal, toolUseError, UNEXPECTEDLY_MODIFIED_MESSAGE } from './files/staleness.ts';
import { missingFileMessage, resolveWorkspacePath, type ResolvedPath } from './files/workspace-path.ts';

export const MAX_EDIT_BYTES = 1024 * 1024 * 1024;

/** The words (a plain error, thrown while writing) for an edit that would change nothing. */
export const EDIT_CHANGED_NOTHING_MESSAGE = 'String not found in file. Failed to apply edit.';

export interface EditResult {
  type: 'edit';
  path: string;
  fileState: FileStateEntry;
}

/**
 * One string replacement for the Edit tool, with its checks in order (error codes 1–10,
 * docs/tools.md). The strings are normalised first (files/input-normalise.ts).
 * Validation refusals come back wrapped in <tool_use_error>; the last-moment staleness check and
 * an edit that changes nothing are plain errors. Encoding and line endings
 * are kept.
 */
const editSchema = z.object({
  type: z.literal('edit'),
  path: z.string(),
  oldString: z.string(),
  newString: z.string(),
  replaceAll: z.boolean().default(false),
  known: fileStateEntrySchema.optional(),
});

type EditOp = z.infer<typeof editSchema>;

export const editOp = defineOp({
  schema: editSchema,
  mutatesWorkspace: true,
  async run(ctx, op) {
    const { target, oldString, newString } = await validateEdit(ctx, op);
    await fs.mkdir(path.dirname(target.real), { recursive: true });
    const current = await readTextFile(target.real).catch(() => undefined);
    if (current && (!op.known || op.known.hash !== hashText(current.content))) throw new ToolInputError(UNEXPECTEDLY_MODIFIED_MESSAGE);
    const original = current?.content ?? '';
    let updated: string;
    if (oldString === '') {
      updated = newString;
    } else {
      const actual = findActualString(original, oldString) ?? oldString;
      updated = applyReplacement(original, actual, preserveQuoteStyle(oldString, actual, newString), op.replaceAll);
    }
    // Reached mainly when the strings differ only in curly versus straight quotes: matching
    // straightens them and the replacement takes the file's style back, so nothing would change.
    if (updated === original) throw new ToolInputError(EDIT_CHANGED_NOTHING_MESSAGE);
    await writeTextFile(target.real, updated, current?.encoding ?? 'utf8', current?.lineEndings ?? 'LF');
    const result: EditResult = { type: 'edit', path: target.virtual, fileState: { hash: hashText(updated) } };
    return { result };
  },
});

const refuse = (message: string): never => {
  throw new ToolInputError(toolUseError(message));
};

/** The validation, in order; the strings come back normalised. */
async function validateEdit(ctx: OpContext, op: EditOp): Promise<{ target: ResolvedPath; oldString: string; newString: string }> {
  const resolved = await resolveWorkspacePath(ctx, op.path);
  const st = resolved ? await fs.stat(resolved.real).catch(() => undefined) : undefined;
  // The strings are rewritten before anything is checked, so every check below (even
  // "No changes to make") sees them normalised.
  const readable = resolved && st?.isFile() && st.size <= MAX_EDIT_BYTES ? await readTextFile(resolved.real) : undefined;
  const { oldString, newString } = normaliseEditStrings(op.path, op, readable?.content);
  if (oldString === newString) refuse('No changes to make: old_string and new_string are exactly the same.');
  if (st && st.size > MAX_EDIT_BYTES) {
    refuse(`File is too large to edit (${formatFileSize(st.size)}). Maximum editable file size is ${formatFileSize(MAX_EDIT_BYTES)}.`);
  }
  let file: TextFile | undefined;
  if (st?.isDirectory()) refuse(`EISDIR: illegal operation on a directory, read '${resolved!.virtual}'`);
  if (resolved && st) file = readable ?? (await readTextFile(resolved.real));
  if (!file) {
    if (oldString !== '' || !resolved) refuse(await missingFileMessage(ctx, resolved));
  } else if (oldString === '') {
    if (file.content.trim() !== '') refuse('Cannot create new file - file already exists.');
  } else {
    checkReplacement(file, resolved!, op, oldString);
  }
  return { target: resolved!, oldString, newString };
}

/** An edit of an existing file: not a notebook, not stale, and the string found (once, unless replaceAll). */
function checkReplacement(file: TextFile, resolved: ResolvedPath, op: EditOp, oldString: string): void {
  if (resolved.virtual.endsWith('.ipynb')) refuse('File is a Jupyter Notebook. Use the NotebookEdit to edit this file.');
  const stale = stalenessRefusal(op.known, hashText(file.content));
  if (stale) refuse(stale);
  const actual = findActualString(file.content, oldString);
  if (actual === undefined) refuse(`String to replace not found in file.\nString: ${oldString}`);
  const count = file.content.split(actual!).length - 1;
  if (count > 1 && !op.replaceAll) {
    refuse(
      `Found ${count} matches of the string to replace, but replace_all is false. To replace all occurrences, set replace_all to true. To replace only one occurrence, please provide more context to uniquely identify the instance.\nString: ${oldString}`,
    );
  }
}
