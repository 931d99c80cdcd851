import { z } from 'zod';
import type { TaskOutputResult } from '../../sandbox-runner/protocol.ts';
import { buildTool } from './tool.ts';

export const TASK_OUTPUT_TOOL_NAME = 'TaskOutput';

const inputSchema = z.strictObject({
  task_id: z.string().describe('The background task id Bash returned'),
  block: z.boolean().optional().describe('Wait for the task to finish (default true)'),
  timeout: z.number().min(0).max(600_000).optional().describe('Longest wait in ms (default 30000)'),
});

export const taskOutputTool = buildTool({
  name: TASK_OUTPUT_TOOL_NAME,
  aliases: ['BashOutputTool'],
  inputSchema,
  description:
    'Gets the status and output of a background Bash task (started with run_in_background, or moved to the background when it outlived its timeout). ' +
    'By default waits up to 30 s for it to finish; block=false only looks.',
  maxResultSizeChars: 100_000,
  isReadOnly: () => true,
  isConcurrencySafe: () => true,
  async call(input, ctx) {
    const data = await ctx.workspace.run({
      type: 'task_output',
      taskId: input.task_id,
      block: input.block ?? true,
      timeoutMs: Math.floor(input.timeout ?? 30_000),
    });
    return { data };
  },
  mapToolResultToToolResultBlockParam(out: TaskOutputResult, toolUseId) {
    const parts = [
      `<retrieval_status>${out.retrieval}</retrieval_status>`,
      `<task_id>${out.taskId}</task_id>`,
      '<task_type>local_bash</task_type>',
      `<status>${out.status}</status>`,
    ];
    if (out.exitCode !== undefined && out.exitCode !== null) parts.push(`<exit_code>${out.exitCode}</exit_code>`);
    if (out.ownerSilentMs !== undefined) {
      parts.push(
        `<note>The runner container that ran this task has not reported for ${Math.round(out.ownerSilentMs / 1000)} s: it has most likely ended, and the task with it. ` +
          'The output below is the last copy it saved. Waiting will not change it; run the command again if you need its result.</note>',
      );
    }
    if (out.output.trim()) parts.push(`<output>\n${out.output.trimEnd()}\n</output>`);
    return { type: 'tool_result', tool_use_id: toolUseId, content: parts.join('\n\n') };
  },
});
