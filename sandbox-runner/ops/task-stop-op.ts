import { z } from 'zod';
import { defineOp } from './op.ts';
import { ToolInputError } from '../workspace/tool-input-error.ts';
import { toolUseError } from './files/staleness.ts';
import { createTaskFiles } from './tasks/task-files.ts';
import { createTaskMirror } from './tasks/task-mirror.ts';

export interface TaskStopResult {
  type: 'task_stop';
  taskId: string;
  command: string;
}

/** Kills a running background task (its whole sandbox) and forgets it, here and in its S3 copy. */
export const taskStopOp = defineOp({
  schema: z.object({ type: z.literal('task_stop'), taskId: z.string() }),
  mutatesWorkspace: false,
  async run(ctx, op) {
    const tasks = createTaskFiles(ctx.tmpDir);
    const record = await tasks.get(op.taskId);
    const mirror = createTaskMirror(ctx.remote);
    if (!record) {
      // Only the runner holding the process can kill it; another container can only say where it is.
      const remote = await mirror.get(op.taskId);
      if (!remote) throw new ToolInputError(toolUseError(`No task found with ID: ${op.taskId}`));
      if (remote.status !== 'running') throw new ToolInputError(toolUseError(`Task ${op.taskId} is not running (status: ${remote.status})`));
      throw new ToolInputError(
        toolUseError(
          `Task ${op.taskId} is running in another runner container and cannot be stopped from here. ` +
            'Use TaskOutput to read its output; it ends on its own or when that container does.',
        ),
      );
    }
    if (record.status !== 'running') throw new ToolInputError(toolUseError(`Task ${op.taskId} is not running (status: ${record.status})`));
    await tasks.write({ ...record, status: 'killed' });
    try {
      process.kill(-record.pid, 'SIGKILL');
    } catch {
      // It ended on its own meanwhile.
    }
    await tasks.forget(op.taskId);
    await mirror.forget({ ...record, status: 'killed' }).catch(() => undefined);
    const result: TaskStopResult = { type: 'task_stop', taskId: record.taskId, command: record.command };
    return { result };
  },
});
