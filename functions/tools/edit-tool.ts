import { z } from 'zod';
import { buildTool } from './tool.ts';

export const EDIT_TOOL_NAME = 'Edit';

const inputSchema = z.strictObject({
  file_path: z.string().describe('Absolute path of the file to change (the workspace is /workspace)'),
  old_string: z.string().describe('The exact text to replace (empty to create a new file)'),
  new_string: z.string().describe('The text to put in its place (must differ from old_string)'),
  replace_all: z.boolean().optional().describe('Replace every occurrence instead of exactly one (default false)'),
});

export interface EditOutput {
  filePath: string;
  replaceAll: boolean;
}

export const editTool = buildTool({
  name: EDIT_TOOL_NAME,
  inputSchema,
  editsFiles: true,
  compactableResult: true,
  description:
    'Replaces text in a file of the workspace. Read the file first. old_string must occur exactly once unless replace_all is true; ' +
    "add surrounding lines to make it unique. Indentation must match the file exactly (do not include Read's line-number prefix). " +
    'The file keeps its encoding and line endings. An empty old_string creates a new file.',
  maxResultSizeChars: 100_000,
  async call(input, ctx) {
    const ws = ctx.workspace;
    const result = await ws.run({
      type: 'edit',
      path: input.file_path,
      oldString: input.old_string,
      newString: input.new_string,
      replaceAll: input.replace_all ?? false,
      known: ws.getFileState(input.file_path),
    });
    ws.setFileState(result.path, result.fileState);
    return { data: { filePath: input.file_path, replaceAll: input.replace_all ?? false } satisfies EditOutput };
  },
  mapToolResultToToolResultBlockParam(output, toolUseId) {
    const content = output.replaceAll
      ? `The file ${output.filePath} has been updated. All occurrences were successfully replaced.`
      : `The file ${output.filePath} has been updated successfully.`;
    return { type: 'tool_result', tool_use_id: toolUseId, content };
  },
});
