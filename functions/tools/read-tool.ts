import { z } from 'zod';
import { buildTool, ToolError, type ToolContext } from './tool.ts';

export const READ_TOOL_NAME = 'Read';
const DEFAULT_LINE_LIMIT = 2000;

const inputSchema = z.strictObject({
  file_path: z.string().describe('The absolute path to the file to read'),
  offset: z.number().int().nonnegative().optional().describe('The line number to start reading from. Only provide if the file is too large to read at once'),
  limit: z.number().int().positive().optional().describe('The number of lines to read. Only provide if the file is too large to read at once.'),
});

export interface ReadOutput {
  filePath: string;
  /** The selected lines, without numbers. */
  lines: string[];
  startLine: number;
  totalLines: number;
}

export const readTool = buildTool({
  name: READ_TOOL_NAME,
  inputSchema,
  description:
    'Reads a file from the workspace. file_path must be absolute (the workspace is /workspace). ' +
    `By default reads up to ${DEFAULT_LINE_LIMIT} lines from the start; use offset and limit for long files. ` +
    'Lines are returned with their line numbers.',
  maxResultSizeChars: Infinity,
  isReadOnly: () => true,
  isConcurrencySafe: () => true,
  async validateInput(input) {
    if (!input.file_path.startsWith('/')) return { ok: false, message: `file_path must be an absolute path, got "${input.file_path}".` };
    return { ok: true };
  },
  async call(input, ctx) {
    const file = ctx.persistedResults?.owns(input.file_path)
      ? await readPersistedResult(ctx, input.file_path) // context: persisted results live in S3, not in the workspace
      : await ctx.workspace.run({ type: 'read', path: input.file_path });
    const all = splitLines(file.content);
    const startLine = input.offset && input.offset > 0 ? input.offset : 1;
    if (all.length > 0 && startLine > all.length) {
      throw new ToolError(`<system-reminder>Warning: the file exists but is shorter than the provided offset (${startLine}). The file has ${all.length} lines.</system-reminder>`);
    }
    const lines = all.slice(startLine - 1, startLine - 1 + (input.limit ?? DEFAULT_LINE_LIMIT));
    return { data: { filePath: file.path, lines, startLine, totalLines: all.length } };
  },
  mapToolResultToToolResultBlockParam(output, toolUseId) {
    const content =
      output.totalLines === 0
        ? '<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>'
        : formatWithLineNumbers(output.lines, output.startLine);
    return { type: 'tool_result', tool_use_id: toolUseId, content };
  },
});

async function readPersistedResult(ctx: ToolContext, filePath: string): Promise<{ path: string; content: string }> {
  const content = await ctx.persistedResults!.read(filePath);
  if (content === undefined) throw new ToolError(`File does not exist. Current working directory: ${ctx.workspace.cwd}`);
  return { path: filePath, content };
}

/** Lines as an editor shows them: a trailing newline does not start another line. */
function splitLines(content: string): string[] {
  if (content === '') return [];
  const lines = content.split(/\r?\n/);
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** `     1→text`: the number right-aligned in six columns, then an arrow. */
export function formatWithLineNumbers(lines: string[], startLine: number): string {
  return lines.map((line, i) => `${String(startLine + i).padStart(6, ' ')}→${line}`).join('\n');
}
