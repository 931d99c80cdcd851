import { z } from 'zod';
import { defineOp } from './op.ts';
import { ToolInputError } from './op-context.ts';
import { toolUseError } from './files/staleness.ts';
import { createTaskFiles } from './tasks/task-files.ts';

export interface TaskStopResult {
  type: 'task_stop';
  taskId: string;
  command: string;
}

/** Kills a running background task (its whole sandbox) and forgets it. */
export const taskStopOp = defineOp({
  schema: z.object({ type: z.literal('task_stop'), taskId: z.string() }),
  mutatesWorkspace: false,
  async run(ctx, op) {
    const tasks = createTaskFiles(ctx.tmpDir);
    const record = await tasks.get(op.taskId);
    if (!record) throw new ToolInputError(toolUseError(`No task found with ID: ${op.taskId}`));
    if (record.status !== 'running') throw new ToolInputError(toolUseError(`Task ${op.taskId} is not running (status: ${record.status})`));
    await tasks.write({ ...record, status: 'killed' });
    try {
      process.kill(-record.pid, 'SIGKILL');
    } catch {
      // It ended on its own meanwhile.
    }
    await tasks.forget(op.taskId);
    const result: TaskStopResult = { type: 'task_stop', taskId: record.taskId, command: record.command };
    return { result };
  },
});
