import path from 'node:path';
import { z } from 'zod';
import type { ImageBlockParam, TextBlockParam } from '@anthropic-ai/sdk/resources/messages';
import { formatFileSize } from '../../sandbox-runner/common/file-size.ts';
import type { InstructionFile, NotebookCell, ReadResult } from '../../sandbox-runner/protocol.ts';
import { nestedInstructionsReminder } from './instructions-text.ts';
import { buildTool, ToolError, type ToolContext } from './tool.ts';

export const READ_TOOL_NAME = 'Read';
export const FILE_UNCHANGED_TEXT =
  'File unchanged since last read. The content from the earlier Read tool_result in this conversation is still current — refer to that instead of re-reading.';

/** Reading these would block or never end. */
const DEVICE_FILES = new Set([
  '/dev/zero',
  '/dev/random',
  '/dev/urandom',
  '/dev/full',
  '/dev/stdin',
  '/dev/tty',
  '/dev/console',
  '/dev/stdout',
  '/dev/stderr',
  '/dev/fd/0',
  '/dev/fd/1',
  '/dev/fd/2',
]);

/** Extensions refused as binary before anything is read (images are read as images). */
const BINARY_EXTENSIONS = new Set(
  (
    'bmp ico tiff tif mp4 mov avi mkv webm wmv flv m4v mpeg mpg mp3 wav ogg flac aac m4a wma aiff opus zip tar gz bz2 7z rar xz z tgz iso ' +
    'exe dll so dylib bin o a obj lib app msi deb rpm doc docx xls xlsx ppt pptx odt ods odp ttf otf woff woff2 eot pyc pyo class jar war ear ' +
    'node wasm rlib sqlite sqlite3 db mdb idx psd ai eps sketch fig xd blend 3ds max swf fla lockb dat data'
  ).split(' '),
);

const inputSchema = z.strictObject({
  file_path: z.string().describe('Absolute path of the file to read (the workspace is /workspace)'),
  offset: z.number().int().nonnegative().optional().describe('Line to start from (1-based); only for files too long to read at once'),
  limit: z.number().int().positive().optional().describe('How many lines to read; only for files too long to read at once'),
  pages: z.string().optional().describe('PDF page range such as "1-5" or "3" (at most 20 pages per request)'),
});

export const MAX_PDF_PAGES_PER_READ = 20;

export const readTool = buildTool({
  name: READ_TOOL_NAME,
  inputSchema,
  compactableResult: true,
  description:
    'Reads a file from the workspace (/workspace). Give an absolute path. Text comes back one line per row as ' +
    '"<line number><TAB><text>". Whole files over 256 KB need offset/limit; use them to page through long files. ' +
    'Images (png, jpg, gif, webp) come back as images. Re-reading a file that has not changed returns a short note instead of the text.',
  maxResultSizeChars: Infinity,
  isReadOnly: () => true,
  isConcurrencySafe: () => true,
  async validateInput(input) {
    if (input.pages !== undefined) {
      const range = parsePageRange(input.pages);
      if (!range) return { ok: false, message: `Invalid pages parameter: "${input.pages}". Use formats like "1-5", "3", or "10-20". Pages are 1-indexed.` };
      const count = range.last === Infinity ? MAX_PDF_PAGES_PER_READ + 1 : range.last - range.first + 1;
      if (count > MAX_PDF_PAGES_PER_READ) {
        return {
          ok: false,
          message: `Page range "${input.pages}" exceeds maximum of ${MAX_PDF_PAGES_PER_READ} pages per request. Please use a smaller range.`,
        };
      }
      if (path.extname(input.file_path).toLowerCase() !== '.pdf') {
        return { ok: false, message: `The pages parameter is only for PDF files; ${input.file_path} is not one.` };
      }
    }
    const ext = path.extname(input.file_path).toLowerCase();
    if (BINARY_EXTENSIONS.has(ext.slice(1))) {
      return {
        ok: false,
        message: `This tool cannot read binary files. The file appears to be a binary ${ext} file. Please use appropriate tools for binary file analysis.`,
      };
    }
    if (isDeviceFile(input.file_path)) {
      return { ok: false, message: `Cannot read '${input.file_path}': this device file would block or produce infinite output.` };
    }
    return { ok: true };
  },
  async call(input, ctx) {
    // Large tool results persisted by the harness live in S3 under a reserved path, not in the workspace.
    if (ctx.persistedResults?.owns(input.file_path)) return { data: await readPersistedResult(ctx, input) };
    const ws = ctx.workspace;
    const pages = input.pages === undefined ? undefined : parsePageRange(input.pages);
    const lookup = ws.nestedInstructionsRequest();
    const result = await ws.run({
      type: 'read',
      path: input.file_path,
      offset: input.offset ?? 1,
      limit: input.limit,
      known: ws.getFileState(input.file_path),
      ...(pages ? { pages: { first: pages.first, last: pages.last === Infinity ? pages.first + MAX_PDF_PAGES_PER_READ - 1 : pages.last } } : {}),
      ...(lookup ? { instructions: lookup } : {}),
    });
    if (result.kind !== 'text' && result.kind !== 'notebook') return { data: result };
    ws.setFileState(result.path, result.fileState);
    if (!result.instructions) return { data: result };
    // Recorded with the session: a later Read under the same directory, in any turn, does not attach it again.
    const { instructions, ...rest } = result;
    const fresh: InstructionFile[] = ws.claimInstructions(instructions);
    return { data: fresh.length > 0 ? { ...rest, instructions: fresh } : rest };
  },
  mapToolResultToToolResultBlockParam(output: ReadResult, toolUseId) {
    switch (output.kind) {
      case 'unchanged':
        return { type: 'tool_result', tool_use_id: toolUseId, content: FILE_UNCHANGED_TEXT };
      case 'image':
        return {
          type: 'tool_result',
          tool_use_id: toolUseId,
          content: [{ type: 'image', source: { type: 'base64', media_type: output.mediaType as 'image/png', data: output.base64 } }],
        };
      case 'pdf':
        // The document goes in the tool_result itself, not in a separate user message (docs/tools.md, "Read details").
        return {
          type: 'tool_result',
          tool_use_id: toolUseId,
          content: [
            {
              type: 'text',
              text: output.pages
                ? `PDF pages ${output.pages.first}-${output.pages.last} of ${output.pages.total} read: ${output.path} (${formatFileSize(output.sizeBytes)})`
                : `PDF file read: ${output.path} (${formatFileSize(output.sizeBytes)})`,
            },
            { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: output.base64 } },
          ],
        };
      case 'notebook': {
        const blocks = notebookBlocks(output.cells);
        if (output.instructions) blocks.push({ type: 'text', text: nestedInstructionsReminder(output.instructions) });
        return { type: 'tool_result', tool_use_id: toolUseId, content: blocks };
      }
      case 'text': {
        const content = output.content
          ? formatWithLineNumbers(output.content, output.startLine)
          : output.totalLines === 0
            ? '<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>'
            : `<system-reminder>Warning: the file exists but is shorter than the provided offset (${output.startLine}). The file has ${output.totalLines} lines.</system-reminder>`;
        const withInstructions = output.instructions ? `${content}\n\n${nestedInstructionsReminder(output.instructions)}` : content;
        return { type: 'tool_result', tool_use_id: toolUseId, content: withInstructions };
      }
    }
  },
});

/** `<n>\t<line>`, numbered from `startLine`. */
export function formatWithLineNumbers(content: string, startLine: number): string {
  return content
    .split(/\r?\n/)
    .map((line, i) => `${i + startLine}\t${line}`)
    .join('\n');
}

function isDeviceFile(filePath: string): boolean {
  return DEVICE_FILES.has(filePath) || /^\/proc\/(self|\d+)\/fd\/[0-2]$/.test(filePath);
}

/** Each cell as `<cell id="…">source</cell id="…">`, then its outputs; adjacent texts merged with a newline. */
function notebookBlocks(cells: NotebookCell[]): (TextBlockParam | ImageBlockParam)[] {
  const blocks: (TextBlockParam | ImageBlockParam)[] = [];
  const push = (block: TextBlockParam | ImageBlockParam) => {
    const last = blocks.at(-1);
    if (last?.type === 'text' && block.type === 'text') last.text += `\n${block.text}`;
    else blocks.push(block);
  };
  for (const cell of cells) {
    const tags =
      (cell.cellType !== 'code' ? `<cell_type>${cell.cellType}</cell_type>` : '') +
      (cell.cellType === 'code' && cell.language !== 'python' ? `<language>${cell.language}</language>` : '');
    push({ type: 'text', text: `<cell id="${cell.cellId}">${tags}${cell.source}</cell id="${cell.cellId}">` });
    for (const out of cell.outputs) {
      if (out.text) push({ type: 'text', text: `\n${out.text}` });
      if (out.image) push({ type: 'image', source: { type: 'base64', media_type: out.image.mediaType as 'image/png', data: out.image.data } });
    }
  }
  return blocks;
}

/** "3", "1-5", "10-" (to the end); 1-based. */
function parsePageRange(pages: string): { first: number; last: number } | undefined {
  const text = pages.trim();
  const single = /^(\d+)$/.exec(text);
  if (single) return Number(single[1]) >= 1 ? { first: Number(single[1]), last: Number(single[1]) } : undefined;
  const open = /^(\d+)-$/.exec(text);
  if (open) return Number(open[1]) >= 1 ? { first: Number(open[1]), last: Infinity } : undefined;
  const closed = /^(\d+)-(\d+)$/.exec(text);
  if (!closed) return undefined;
  const [first, last] = [Number(closed[1]), Number(closed[2])];
  return first >= 1 && last >= first ? { first, last } : undefined;
}

/** A persisted tool result, paged like any text file (it has no file state: it never changes). */
async function readPersistedResult(ctx: ToolContext, input: { file_path: string; offset?: number; limit?: number }): Promise<ReadResult> {
  const content = await ctx.persistedResults!.read(input.file_path);
  if (content === undefined) throw new ToolError(`File does not exist. Current working directory: ${ctx.workspace.cwd}`);
  const lines = content.split(/\r?\n/);
  const offset = input.offset ?? 1;
  const start = Math.max(0, offset - 1);
  const selected = lines.slice(start, input.limit === undefined ? undefined : start + input.limit);
  return {
    type: 'read',
    kind: 'text',
    path: input.file_path,
    content: selected.join('\n'),
    startLine: offset,
    numLines: selected.length,
    totalLines: lines.length,
    fileState: { hash: '', offset },
  };
}
