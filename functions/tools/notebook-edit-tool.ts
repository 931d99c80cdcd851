import { z } from 'zod';
import type { NotebookEditResult } from '../../sandbox-runner/protocol.ts';
import { buildTool } from './tool.ts';

export const NOTEBOOK_EDIT_TOOL_NAME = 'NotebookEdit';

const inputSchema = z.strictObject({
  notebook_path: z.string().describe('Absolute path of the .ipynb file to change (the workspace is /workspace)'),
  cell_id: z
    .string()
    .optional()
    .describe('The cell to change, by its id (or `cell-N`, its 0-based position); for an insert, the new cell goes after it, or first when omitted'),
  new_source: z.string().describe("The cell's new source"),
  cell_type: z
    .enum(['code', 'markdown'])
    .optional()
    .describe("code or markdown: required for an insert; for a replace, changes the cell's type (default: keep it)"),
  edit_mode: z.enum(['replace', 'insert', 'delete']).optional().describe('replace (default), insert or delete'),
});

export const notebookEditTool = buildTool({
  name: NOTEBOOK_EDIT_TOOL_NAME,
  inputSchema,
  editsFiles: true,
  description:
    'Changes one cell of a Jupyter notebook (.ipynb) in the workspace: replaces its source, inserts a new cell after it, or deletes it. ' +
    'Read the notebook first; cell ids are the `<cell id="…">` tags Read shows. Replacing a code cell clears its outputs and execution count. ' +
    'Use Edit for other files.',
  maxResultSizeChars: 100_000,
  searchHint: 'jupyter notebook ipynb cell',
  async call(input, ctx) {
    const ws = ctx.workspace;
    const result = await ws.run({
      type: 'notebook_edit',
      path: input.notebook_path,
      newSource: input.new_source,
      known: ws.getFileState(input.notebook_path),
      ...(input.cell_id !== undefined ? { cellId: input.cell_id } : {}),
      ...(input.cell_type ? { cellType: input.cell_type } : {}),
      ...(input.edit_mode ? { editMode: input.edit_mode } : {}),
    });
    ws.setFileState(result.path, result.fileState);
    return { data: { ...result, newSource: input.new_source } };
  },
  mapToolResultToToolResultBlockParam(output: NotebookEditResult & { newSource: string }, toolUseId) {
    // A notebook without cell ids (nbformat before 4.5) has no id to name: the answer says `undefined` then.
    const id = output.cellId ?? 'undefined';
    const content =
      output.mode === 'delete'
        ? `Deleted cell ${id}`
        : output.mode === 'insert'
          ? `Inserted cell ${id} with ${output.newSource}`
          : `Updated cell ${id} with ${output.newSource}`;
    return { type: 'tool_result', tool_use_id: toolUseId, content };
  },
});
