import { z } from 'zod';
import type { GrepResult } from '../../sandbox-runner/protocol.ts';
import { buildTool } from './tool.ts';

export const GREP_TOOL_NAME = 'Grep';

const inputSchema = z.strictObject({
  pattern: z.string().describe('Regular expression to search for (ripgrep syntax)'),
  path: z.string().optional().describe('File or directory to search; defaults to the current working directory'),
  glob: z.string().optional().describe('Only files matching this glob, e.g. "*.ts" or "*.{ts,tsx}"'),
  output_mode: z
    .enum(['content', 'files_with_matches', 'count'])
    .optional()
    .describe('"files_with_matches" (default): paths; "content": matching lines; "count": matches per file'),
  '-B': z.number().int().nonnegative().optional().describe('Lines of context before each match (content mode)'),
  '-A': z.number().int().nonnegative().optional().describe('Lines of context after each match (content mode)'),
  '-C': z.number().int().nonnegative().optional().describe('Same as context'),
  context: z.number().int().nonnegative().optional().describe('Lines of context around each match (content mode)'),
  '-n': z.boolean().optional().describe('Line numbers in content mode (default true)'),
  '-i': z.boolean().optional().describe('Case-insensitive search'),
  type: z.string().optional().describe('Only files of this ripgrep type, e.g. js, py, rust'),
  head_limit: z.number().int().nonnegative().optional().describe('At most this many results (default 250; 0 for all)'),
  offset: z.number().int().nonnegative().optional().describe('Skip this many results first (for paging)'),
  multiline: z.boolean().optional().describe('Let patterns span lines ("." matches newlines)'),
});

export const grepTool = buildTool({
  name: GREP_TOOL_NAME,
  inputSchema,
  compactableResult: true,
  description:
    'Searches file contents in the workspace with ripgrep. Version-control directories are skipped; lines longer than 500 characters are omitted. ' +
    'Results are capped by head_limit (default 250); page with offset.',
  maxResultSizeChars: 20_000,
  isReadOnly: () => true,
  isConcurrencySafe: () => true,
  async call(input, ctx) {
    const data = await ctx.workspace.run({
      type: 'grep',
      pattern: input.pattern,
      path: input.path,
      glob: input.glob,
      fileType: input.type,
      mode: input.output_mode ?? 'files_with_matches',
      before: input['-B'],
      after: input['-A'],
      context: input.context ?? input['-C'],
      lineNumbers: input['-n'] ?? true,
      caseInsensitive: input['-i'] ?? false,
      multiline: input.multiline ?? false,
      headLimit: input.head_limit,
      offset: input.offset ?? 0,
    });
    return { data };
  },
  mapToolResultToToolResultBlockParam(out: GrepResult, toolUseId) {
    const paging = [
      ...(out.appliedLimit !== undefined ? [`limit: ${out.appliedLimit}`] : []),
      ...(out.appliedOffset ? [`offset: ${out.appliedOffset}`] : []),
    ].join(', ');
    let content: string;
    if (out.mode === 'content') {
      const body = out.lines.join('\n') || 'No matches found';
      content = paging ? `${body}\n\n[Showing results with pagination = ${paging}]` : body;
    } else if (out.mode === 'count') {
      const body = out.lines.join('\n') || 'No matches found';
      content = `${body}\n\nFound ${out.numMatches} total ${out.numMatches === 1 ? 'occurrence' : 'occurrences'} across ${out.numFiles} ${out.numFiles === 1 ? 'file' : 'files'}.${paging ? ` with pagination = ${paging}` : ''}`;
    } else if (out.numFiles === 0) {
      content = 'No files found';
    } else {
      content = `Found ${out.numFiles} ${out.numFiles === 1 ? 'file' : 'files'}${paging ? ` ${paging}` : ''}\n${out.filenames.join('\n')}`;
    }
    return { type: 'tool_result', tool_use_id: toolUseId, content };
  },
});
