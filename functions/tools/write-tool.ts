import { z } from 'zod';
import type { WriteResult } from '../../sandbox-runner/protocol.ts';
import { buildTool } from './tool.ts';

export const WRITE_TOOL_NAME = 'Write';

const inputSchema = z.strictObject({
  file_path: z.string().describe('Absolute path of the file to write (the workspace is /workspace)'),
  content: z.string().describe('The whole new content of the file'),
});

export const writeTool = buildTool({
  name: WRITE_TOOL_NAME,
  inputSchema,
  editsFiles: true,
  compactableResult: true,
  description:
    'Creates or overwrites a file in the workspace with the given content, creating parent directories as needed. ' +
    'An existing file must have been read with Read first and must not have changed since; prefer Edit for changes to existing files.',
  maxResultSizeChars: 100_000,
  async call(input, ctx) {
    const ws = ctx.workspace;
    const result = await ws.run({ type: 'write', path: input.file_path, content: input.content, known: ws.getFileState(input.file_path) });
    ws.setFileState(result.path, result.fileState);
    // The result names the file as the model wrote it, not as it resolved.
    return { data: { ...result, path: input.file_path } };
  },
  mapToolResultToToolResultBlockParam(output: WriteResult, toolUseId) {
    const content = output.kind === 'create' ? `File created successfully at: ${output.path}` : `The file ${output.path} has been updated successfully.`;
    return { type: 'tool_result', tool_use_id: toolUseId, content };
  },
});
