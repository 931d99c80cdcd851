import { z } from 'zod';
import type { GlobResult } from '../../sandbox-runner/protocol.ts';
import { buildTool } from './tool.ts';

export const GLOB_TOOL_NAME = 'Glob';
export const GLOB_TRUNCATED_NOTE = '(Results are truncated. Consider using a more specific path or pattern.)';

const inputSchema = z.strictObject({
  pattern: z.string().describe('Glob pattern to match file paths, e.g. "**/*.ts" or "src/**/*.{js,jsx}"'),
  path: z.string().optional().describe('Directory to search in; omit it to search the current working directory'),
});

export const globTool = buildTool({
  name: GLOB_TOOL_NAME,
  inputSchema,
  compactableResult: true,
  description:
    'Finds files by name pattern in the workspace. Hidden files are included and .gitignore is not applied. ' +
    'Paths come back relative to the current working directory, least recently modified first, at most 100.',
  maxResultSizeChars: 100_000,
  isReadOnly: () => true,
  isConcurrencySafe: () => true,
  async call(input, ctx) {
    return { data: await ctx.workspace.run({ type: 'glob', pattern: input.pattern, path: input.path }) };
  },
  mapToolResultToToolResultBlockParam(output: GlobResult, toolUseId) {
    const content = output.filenames.length === 0 ? 'No files found' : [...output.filenames, ...(output.truncated ? [GLOB_TRUNCATED_NOTE] : [])].join('\n');
    return { type: 'tool_result', tool_use_id: toolUseId, content };
  },
});
