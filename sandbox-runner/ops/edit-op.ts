import { promises as fs } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { defineOp } from './op.ts';
import { ToolInputError } from './op-context.ts';
import { fileStateEntrySchema, hashText, type FileStateEntry } from './files/file-state.ts';
import { formatFileSize, readTextFile, writeTextFile, type TextFile } from './files/file-text.ts';
import { findActualString, preserveQuoteStyle } from './files/quotes.ts';
import { stalenessRefusal, toolUseError, UNEXPECTEDLY_MODIFIED_MESSAGE } from './files/staleness.ts';
import { missingFileMessage, resolveWorkspacePath } from './files/workspace-path.ts';

export const MAX_EDIT_BYTES = 1024 * 1024 * 1024;

export interface EditResult {
  type: 'edit';
  path: string;
  fileState: FileStateEntry;
}

/**
 * One string replacement for the Edit tool, with the reference's checks in its order (codes 1–10
 * in the seeds). Validation refusals come back wrapped in <tool_use_error>; the last-moment
 * staleness check is a plain error, as in the reference. Encoding and line endings are kept.
 */
export const editOp = defineOp({
  schema: z.object({
    type: z.literal('edit'),
    path: z.string(),
    oldString: z.string(),
    newString: z.string(),
    replaceAll: z.boolean().default(false),
    known: fileStateEntrySchema.optional(),
  }),
  mutatesWorkspace: true,
  async run(ctx, op) {
    const refuse = (message: string): never => {
      throw new ToolInputError(toolUseError(message));
    };
    if (op.oldString === op.newString) refuse('No changes to make: old_string and new_string are exactly the same.');
    const resolved = await resolveWorkspacePath(ctx, op.path);
    const st = resolved ? await fs.stat(resolved.real).catch(() => undefined) : undefined;
    if (st && st.size > MAX_EDIT_BYTES) {
      refuse(`File is too large to edit (${formatFileSize(st.size)}). Maximum editable file size is ${formatFileSize(MAX_EDIT_BYTES)}.`);
    }
    let file: TextFile | undefined;
    if (st?.isDirectory()) refuse(`EISDIR: illegal operation on a directory, read '${resolved!.virtual}'`);
    if (resolved && st) file = await readTextFile(resolved.real);
    if (!file) {
      if (op.oldString !== '' || !resolved) refuse(await missingFileMessage(ctx, resolved));
    } else if (op.oldString === '') {
      if (file.content.trim() !== '') refuse('Cannot create new file - file already exists.');
    } else {
      if (resolved!.virtual.endsWith('.ipynb')) refuse('File is a Jupyter Notebook. Use the NotebookEdit to edit this file.');
      const stale = stalenessRefusal(op.known, hashText(file.content));
      if (stale) refuse(stale);
      const actual = findActualString(file.content, op.oldString);
      if (actual === undefined) refuse(`String to replace not found in file.\nString: ${op.oldString}`);
      const count = file.content.split(actual!).length - 1;
      if (count > 1 && !op.replaceAll) {
        refuse(
          `Found ${count} matches of the string to replace, but replace_all is false. To replace all occurrences, set replace_all to true. To replace only one occurrence, please provide more context to uniquely identify the instance.\nString: ${op.oldString}`,
        );
      }
    }

    const target = resolved!;
    await fs.mkdir(path.dirname(target.real), { recursive: true });
    const current = await readTextFile(target.real).catch(() => undefined);
    if (current && (!op.known || op.known.hash !== hashText(current.content))) throw new ToolInputError(UNEXPECTEDLY_MODIFIED_MESSAGE);
    const original = current?.content ?? '';
    let updated: string;
    if (op.oldString === '') {
      updated = op.newString;
    } else {
      const actual = findActualString(original, op.oldString) ?? op.oldString;
      const replacement = preserveQuoteStyle(op.oldString, actual, op.newString);
      updated = op.replaceAll ? original.split(actual).join(replacement) : original.replace(actual, () => replacement);
    }
    await writeTextFile(target.real, updated, current?.encoding ?? 'utf8', current?.lineEndings ?? 'LF');
    const result: EditResult = { type: 'edit', path: target.virtual, fileState: { hash: hashText(updated) } };
    return { result };
  },
});
