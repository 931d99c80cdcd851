import { promises as fs } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { defineOp } from './op.ts';
import type { OpContext } from './op-context.ts';
import { ToolInputError } from '../workspace/tool-input-error.ts';
import { fileStateEntrySchema, hashText, type FileStateEntry } from './files/file-state.ts';
import { formatFileSize } from '../common/file-size.ts';
import { decodeText } from './files/file-text.ts';
import { missingFileMessage, resolveWorkspacePath, type ResolvedPath } from './files/workspace-path.ts';
import { prepareImage } from './files/image.ts';
import { parseNotebook, type NotebookCell } from './files/notebook.ts';
import { extractPdfPages } from './files/pdf-pages.ts';
import type { InstructionFile } from './files/instruction-files.ts';
import { nestedInstructions } from './files/nested-instructions.ts';
import { instructionLimitsSchema } from './read-instructions-op.ts';

/** Widens one result to the op's result union. */
const done = (result: ReadResult) => ({ result });

/** Whole-file reads past this size are refused unless the model pages with `limit`. */
export const READ_MAX_BYTES = 256 * 1024;
export const READ_MAX_TOKENS = 25_000;
/** Largest PDF sent whole as a document block. */
export const PDF_MAX_BYTES = 20 * 1024 * 1024;
const IMAGE_TYPES: Record<string, true> = { png: true, jpg: true, jpeg: true, gif: true, webp: true };

export type ReadResult =
  | {
      type: 'read';
      kind: 'text';
      /** Virtual path of the file. */
      path: string;
      /** The selected lines joined with LF. */
      content: string;
      startLine: number;
      numLines: number;
      totalLines: number;
      fileState: FileStateEntry;
      /** Instructions files of the directories above it the session did not have yet (`instructions` in the op). */
      instructions?: InstructionFile[];
    }
  | { type: 'read'; kind: 'unchanged'; path: string }
  | { type: 'read'; kind: 'notebook'; path: string; cells: NotebookCell[]; fileState: FileStateEntry; instructions?: InstructionFile[] }
  | { type: 'read'; kind: 'image'; path: string; mediaType: string; base64: string; sizeBytes: number }
  | { type: 'read'; kind: 'pdf'; path: string; base64: string; sizeBytes: number; pages?: { first: number; last: number; total: number } };

/**
 * Reads one file of the workspace for the Read tool: the size gates, line selection, the
 * unchanged-file shortcut (when the harness's file state says the model already has this exact
 * range) and the file-state entry the harness stores afterwards.
 */
const readSchema = z.object({
  type: z.literal('read'),
  /** Absolute virtual path, or relative to the cwd. */
  path: z.string(),
  offset: z.number().int().nonnegative().default(1),
  limit: z.number().int().positive().optional(),
  /** What the harness recorded for this file, if anything. */
  known: fileStateEntrySchema.optional(),
  /** For PDFs: only these pages (1-based, inclusive; validated by the harness). */
  pages: z.object({ first: z.number().int().positive(), last: z.number().positive() }).optional(),
  /** Bring the instructions files of the directories above the file (files/nested-instructions.ts). */
  instructions: z
    .object({ names: z.array(z.string().regex(/^[^/]+$/)).max(4), skip: z.array(z.string()).max(1000), limits: instructionLimitsSchema })
    .optional(),
});

type ReadOp = z.infer<typeof readSchema>;

export const readOp = defineOp({
  schema: readSchema,
  mutatesWorkspace: false,
  async run(ctx, op) {
    const outcome = await readFile(ctx, op);
    const { result } = outcome;
    if (!op.instructions || (result.kind !== 'text' && result.kind !== 'notebook')) return outcome;
    const instructions = await nestedInstructions(ctx, result.path, op.instructions);
    return instructions.length > 0 ? done({ ...result, instructions }) : outcome;
  },
});

async function readFile(ctx: OpContext, op: ReadOp): Promise<{ result: ReadResult }> {
  // The Read op proper: the size gates, line selection and the unchanged-file shortcut.
  const resolved = await resolveWorkspacePath(ctx, op.path);
  const st = resolved ? await fs.stat(resolved.real).catch(() => undefined) : undefined;
  if (!resolved || !st) throw new ToolInputError(await missingFileMessage(ctx, resolved));
  if (st.isDirectory()) throw new ToolInputError(`EISDIR: illegal operation on a directory, read '${resolved.virtual}'`);
  if (!st.isFile()) throw new ToolInputError(`Cannot read '${op.path}': not a regular file.`);
  const ext = path.extname(resolved.virtual).slice(1).toLowerCase();
  if (IMAGE_TYPES[ext]) return done(await readImage(ctx, resolved, st.size, ext));
  if (ext === 'pdf') return done(await readPdf(resolved, st.size, op.pages));
  if (op.limit === undefined && st.size > READ_MAX_BYTES && ext !== 'ipynb') throw new ToolInputError(tooLargeMessage(st.size, READ_MAX_BYTES));
  if (st.size > ctx.limits.maxReadBytes) throw new ToolInputError(tooLargeMessage(st.size, ctx.limits.maxReadBytes));
  const { content: text } = decodeText(await fs.readFile(resolved.real));
  const hash = hashText(text);
  const known = op.known;
  if (known && !known.isPartialView && known.offset === op.offset && known.limit === op.limit && known.hash === hash) {
    return done({ type: 'read', kind: 'unchanged', path: resolved.virtual });
  }
  const fileState: FileStateEntry = { hash, offset: op.offset, ...(op.limit !== undefined ? { limit: op.limit } : {}) };
  if (ext === 'ipynb') return done({ type: 'read', kind: 'notebook', path: resolved.virtual, cells: notebookCells(text, op.path), fileState });
  return done(selectLines(text, ext, resolved, op, fileState));
}

async function readImage(ctx: OpContext, resolved: ResolvedPath, size: number, ext: string): Promise<ReadResult> {
  if (size > ctx.limits.maxReadBytes) throw new ToolInputError(tooLargeMessage(size, ctx.limits.maxReadBytes));
  const bytes = await fs.readFile(resolved.real);
  if (bytes.length === 0) throw new ToolInputError(`Image file is empty: ${resolved.virtual}`);
  const image = await prepareImage(bytes, ext, READ_MAX_TOKENS);
  return { type: 'read', kind: 'image', path: resolved.virtual, mediaType: image.mediaType, base64: image.buffer.toString('base64'), sizeBytes: bytes.length };
}

async function readPdf(resolved: ResolvedPath, size: number, pages: ReadOp['pages']): Promise<ReadResult> {
  if (size === 0) throw new ToolInputError(`PDF file is empty: ${resolved.virtual}`);
  if (size > PDF_MAX_BYTES) throw new ToolInputError(`PDF file exceeds maximum allowed size of ${formatFileSize(PDF_MAX_BYTES)}.`);
  const bytes = await fs.readFile(resolved.real);
  if (!bytes.subarray(0, 5).toString('ascii').startsWith('%PDF-')) {
    throw new ToolInputError(`File is not a valid PDF (missing %PDF- header): ${resolved.virtual}`);
  }
  if (!pages) return { type: 'read', kind: 'pdf', path: resolved.virtual, base64: bytes.toString('base64'), sizeBytes: bytes.length };
  const subset = await extractPdfPages(bytes, pages, resolved.virtual);
  const { first, last, total } = subset;
  return {
    type: 'read',
    kind: 'pdf',
    path: resolved.virtual,
    base64: Buffer.from(subset.bytes).toString('base64'),
    sizeBytes: subset.bytes.length,
    pages: { first, last, total },
  };
}

function notebookCells(text: string, asGiven: string): NotebookCell[] {
  let cells: NotebookCell[];
  try {
    cells = parseNotebook(text);
  } catch (err) {
    // The parser's own message, as it is (docs/tools.md, "NotebookEdit").
    throw new ToolInputError((err as Error).message);
  }
  const size = Buffer.byteLength(JSON.stringify(cells));
  if (size > READ_MAX_BYTES) {
    throw new ToolInputError(
      `Notebook content (${formatFileSize(size)}) exceeds maximum allowed size (${formatFileSize(READ_MAX_BYTES)}). Use Bash with jq to read specific portions:\n` +
        `  cat "${asGiven}" | jq '.cells[:20]' # First 20 cells\n` +
        `  cat "${asGiven}" | jq '.cells[100:120]' # Cells 100-120\n` +
        `  cat "${asGiven}" | jq '.cells | length' # Count total cells\n` +
        `  cat "${asGiven}" | jq '.cells[] | select(.cell_type=="code") | .source' # All code sources`,
    );
  }
  return cells;
}

function selectLines(text: string, ext: string, resolved: ResolvedPath, op: ReadOp, fileState: FileStateEntry): ReadResult {
  const lines = text.split('\n');
  const from = op.offset === 0 ? 0 : op.offset - 1;
  const selected = lines.slice(from, op.limit === undefined ? undefined : from + op.limit);
  const content = selected.join('\n');
  const tokens = estimateTokens(content, ext);
  if (tokens > READ_MAX_TOKENS) {
    throw new ToolInputError(
      `File content (${tokens} tokens) exceeds maximum allowed tokens (${READ_MAX_TOKENS}). Use offset and limit parameters to read specific portions of the file, or search for specific content instead of reading the whole file.`,
    );
  }
  return {
    type: 'read',
    kind: 'text',
    path: resolved.virtual,
    content,
    startLine: op.offset,
    numLines: selected.length,
    totalLines: lines.length,
    fileState,
  };
}

function tooLargeMessage(size: number, max: number): string {
  return `File content (${formatFileSize(size)}) exceeds maximum allowed size (${formatFileSize(max)}). Use offset and limit parameters to read specific portions of the file, or search for specific content instead of reading the whole file.`;
}

/** A rough count (no tokenizer in the runner): JSON packs about two characters per token, prose about four. */
function estimateTokens(content: string, ext: string): number {
  return Math.ceil(content.length / (ext === 'json' ? 2 : 4));
}
