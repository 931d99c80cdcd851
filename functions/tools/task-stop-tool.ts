import { z } from 'zod';
import type { TaskStopResult } from '../../sandbox-runner/protocol.ts';
import { buildTool } from './tool.ts';

export const TASK_STOP_TOOL_NAME = 'TaskStop';

const inputSchema = z.strictObject({
  task_id: z.string().describe('The id of the background task to stop'),
});

export const taskStopTool = buildTool({
  name: TASK_STOP_TOOL_NAME,
  aliases: ['KillShell'],
  inputSchema,
  description: 'Stops a running background Bash task by its id.',
  maxResultSizeChars: 100_000,
  isConcurrencySafe: () => true,
  async call(input, ctx) {
    return { data: await ctx.workspace.run({ type: 'task_stop', taskId: input.task_id }) };
  },
  mapToolResultToToolResultBlockParam(out: TaskStopResult, toolUseId) {
    const content = JSON.stringify({
      message: `Successfully stopped task: ${out.taskId} (${out.command})`,
      task_id: out.taskId,
      task_type: 'local_bash',
      command: out.command,
    });
    return { type: 'tool_result', tool_use_id: toolUseId, content };
  },
});
