import { randomBytes } from 'node:crypto';

/** A notebook as JSON.parse gives it: cells with whatever fields they have, in their order. */
export interface NotebookJson {
  cells: Record<string, unknown>[];
  nbformat?: number;
  nbformat_minor?: number;
  [key: string]: unknown;
}

/** One edit: `index` is the addressed cell (-1: none, an insert at the top); `cellId` as the model gave it. */
export type CellEdit = { mode: 'replace' | 'insert' | 'delete'; index: number; cellId?: string; source: string; cellType?: 'code' | 'markdown' };

/** Cells carry ids from nbformat 4.5 on; older notebooks address cells as `cell-N` only. */
export function hasCellIds(nb: NotebookJson): boolean {
  const major = nb.nbformat ?? 0;
  return major > 4 || (major === 4 && (nb.nbformat_minor ?? 0) >= 5);
}

/**
 * Where `cellId` points: the cell with that id, else `cell-N` read as an index. `missing` says
 * why there is no such cell, in the words the model gets.
 */
export function findCell(nb: NotebookJson, cellId: string): { index: number } | { missing: string } {
  const byId = nb.cells.findIndex((cell) => cell.id === cellId);
  if (byId !== -1) return { index: byId };
  const numbered = /^cell-(\d+)$/.exec(cellId);
  if (!numbered) return { missing: `Cell with ID "${cellId}" not found in notebook.` };
  const index = Number(numbered[1]);
  return nb.cells[index] ? { index } : { missing: `Cell with index ${index} does not exist in notebook.` };
}

/** A new cell's id: eleven random base-36 characters. */
export function newCellId(): string {
  return [...randomBytes(11)].map((b) => (b % 36).toString(36)).join('');
}

/**
 * Applies one edit in place. Replacing a code cell's source clears its outputs and execution
 * count; a `cellType` that differs changes the cell's type (its other fields stay). An insert
 * goes after the cell at `index` (-1: at the top). Returns the id the result names: the new
 * cell's, or the id the model addressed the cell by (`cell-1` included); none in a notebook
 * without cell ids.
 */
export function applyCellEdit(nb: NotebookJson, edit: CellEdit): string | undefined {
  const ids = hasCellIds(nb);
  if (edit.mode === 'delete') {
    nb.cells.splice(edit.index, 1);
    return ids ? edit.cellId : undefined;
  }
  if (edit.mode === 'insert') {
    const id = ids ? newCellId() : undefined;
    const type = edit.cellType ?? 'code';
    const cell: Record<string, unknown> = { cell_type: type, ...(id ? { id } : {}), source: edit.source, metadata: {} };
    if (type === 'code') Object.assign(cell, { execution_count: null, outputs: [] });
    nb.cells.splice(edit.index + 1, 0, cell);
    return id;
  }
  const cell = nb.cells[edit.index]!;
  cell.source = edit.source;
  if (cell.cell_type === 'code') Object.assign(cell, { execution_count: null, outputs: [] });
  if (edit.cellType && edit.cellType !== cell.cell_type) cell.cell_type = edit.cellType;
  return ids ? edit.cellId : undefined;
}
