/** One notebook cell as Read shows it. */
export interface NotebookCell {
  cellId: string;
  cellType: string;
  source: string;
  /** Only for code cells. */
  language?: string;
  outputs: { text: string; image?: { data: string; mediaType: string } }[];
}

/** Outputs of one cell longer than this (characters) are replaced by a hint to read them with jq. */
const MAX_CELL_OUTPUT_CHARS = 10_000;

type Json = Record<string, unknown>;

/** Cells with their sources and outputs (stream text, results, errors, png/jpeg images). */
export function parseNotebook(text: string): NotebookCell[] {
  const nb = JSON.parse(text) as { cells?: Json[]; metadata?: { language_info?: { name?: string } } };
  const language = nb.metadata?.language_info?.name ?? 'python';
  return (nb.cells ?? []).map((cell, index) => {
    const cellType = String(cell.cell_type);
    const outputs = cellType === 'code' && Array.isArray(cell.outputs) ? (cell.outputs as Json[]).map(toOutput) : [];
    const size = outputs.reduce((n, o) => n + o.text.length + (o.image?.data.length ?? 0), 0);
    return {
      cellId: typeof cell.id === 'string' ? cell.id : `cell-${index}`,
      cellType,
      source: joinText(cell.source),
      ...(cellType === 'code' ? { language } : {}),
      outputs:
        size > MAX_CELL_OUTPUT_CHARS
          ? [{ text: `Outputs are too large to include. Use Bash with: cat <notebook_path> | jq '.cells[${index}].outputs'` }]
          : outputs,
    };
  });
}

function toOutput(output: Json): NotebookCell['outputs'][number] {
  switch (output.output_type) {
    case 'stream':
      return { text: joinText(output.text) };
    case 'execute_result':
    case 'display_data': {
      const data = (output.data ?? {}) as Json;
      const image =
        typeof data['image/png'] === 'string'
          ? { data: (data['image/png'] as string).replace(/\s/g, ''), mediaType: 'image/png' }
          : typeof data['image/jpeg'] === 'string'
            ? { data: (data['image/jpeg'] as string).replace(/\s/g, ''), mediaType: 'image/jpeg' }
            : undefined;
      return { text: joinText(data['text/plain']), ...(image ? { image } : {}) };
    }
    case 'error':
      return { text: `${String(output.ename)}: ${String(output.evalue)}\n${(Array.isArray(output.traceback) ? output.traceback : []).join('\n')}` };
    default:
      return { text: '' };
  }
}

function joinText(value: unknown): string {
  if (Array.isArray(value)) return value.join('');
  return typeof value === 'string' ? value : '';
}
