import path from 'node:path';
import { z } from 'zod';
import { defineOp } from './op.ts';
import type { OpContext } from './op-context.ts';
import { ToolInputError } from '../workspace/tool-input-error.ts';
import { fileStateEntrySchema, hashText, type FileStateEntry } from './files/file-state.ts';
import { readTextFile, writeTextFile, type TextFile } from './files/file-text.ts';
import { applyCellEdit, findCell, type NotebookJson } from './files/notebook-cells.ts';
import { NOT_READ_MESSAGE, toolUseError } from './files/staleness.ts';
import { resolveWorkspacePath, type ResolvedPath } from './files/workspace-path.ts';

export interface NotebookEditResult {
  type: 'notebook_edit';
  path: string;
  mode: 'replace' | 'insert' | 'delete';
  /** The id the answer names (absent in a notebook without cell ids, where the answer says `undefined`). */
  cellId?: string;
  fileState: FileStateEntry;
}

const notebookEditSchema = z.object({
  type: z.literal('notebook_edit'),
  path: z.string(),
  cellId: z.string().optional(),
  newSource: z.string(),
  cellType: z.enum(['code', 'markdown']).optional(),
  editMode: z.enum(['replace', 'insert', 'delete']).default('replace'),
  known: fileStateEntrySchema.optional(),
});

type NotebookEditOp = z.infer<typeof notebookEditSchema>;

const refuse = (message: string): never => {
  throw new ToolInputError(toolUseError(message));
};

/**
 * Replaces, inserts or deletes one cell of a .ipynb file for the NotebookEdit tool, with the
 * checks in the order docs/tools.md ("NotebookEdit") records: the extension, a cell type for an
 * insert, the notebook read before, valid JSON, a cell id unless inserting, the cell found. A
 * notebook only needs to have been read: one changed since (by a command) is edited as it is now.
 * The notebook is written back as one-space-indented JSON in its encoding and line endings.
 */
export const notebookEditOp = defineOp({
  schema: notebookEditSchema,
  mutatesWorkspace: true,
  async run(ctx, op) {
    const { target, file, notebook, index } = await validateNotebookEdit(ctx, op);
    const cellId = applyCellEdit(notebook, {
      mode: op.editMode,
      index,
      source: op.newSource,
      ...(op.cellId ? { cellId: op.cellId } : {}),
      ...(op.cellType ? { cellType: op.cellType } : {}),
    });
    const updated = JSON.stringify(notebook, null, 1);
    await writeTextFile(target.real, updated, file.encoding, file.lineEndings);
    const written = await readTextFile(target.real);
    const result: NotebookEditResult = {
      type: 'notebook_edit',
      path: target.virtual,
      mode: op.editMode,
      ...(cellId ? { cellId } : {}),
      fileState: { hash: hashText(written.content) },
    };
    return { result };
  },
});

async function validateNotebookEdit(
  ctx: OpContext,
  op: NotebookEditOp,
): Promise<{ target: ResolvedPath; file: TextFile; notebook: NotebookJson; index: number }> {
  if (path.extname(op.path) !== '.ipynb') refuse('File must be a Jupyter notebook (.ipynb file). For editing other file types, use the FileEdit tool.');
  if (op.editMode === 'insert' && !op.cellType) refuse('Cell type is required when using edit_mode=insert.');
  if (!op.known) refuse(NOT_READ_MESSAGE);
  const target = await resolveWorkspacePath(ctx, op.path);
  if (!target) refuse(NOT_READ_MESSAGE);
  const file = await readTextFile(target!.real).catch(() => refuse('Notebook file does not exist.'));
  const notebook = parseNotebook(file.content);
  if (!op.cellId) {
    if (op.editMode !== 'insert') refuse('Cell ID must be specified when not inserting a new cell.');
    return { target: target!, file, notebook, index: -1 };
  }
  const found = findCell(notebook, op.cellId);
  if ('missing' in found) refuse(found.missing);
  return { target: target!, file, notebook, index: (found as { index: number }).index };
}

function parseNotebook(content: string): NotebookJson {
  try {
    const parsed = JSON.parse(content) as NotebookJson;
    if (parsed && Array.isArray(parsed.cells)) return parsed;
  } catch {
    // Refused below, as any content that is not a notebook.
  }
  return refuse('Notebook is not valid JSON.');
}
