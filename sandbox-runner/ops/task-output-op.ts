import { promises as fs } from 'node:fs';
import { z } from 'zod';
import { defineOp } from './op.ts';
import { ToolInputError } from './op-context.ts';
import { toolUseError } from './files/staleness.ts';
import { createTaskFiles, type TaskStatus } from './tasks/task-files.ts';

const POLL_MS = 100;
const MAX_TASK_OUTPUT_BYTES = 1024 * 1024;

export interface TaskOutputResult {
  type: 'task_output';
  retrieval: 'success' | 'timeout' | 'not_ready';
  taskId: string;
  status: TaskStatus;
  exitCode?: number | null;
  output: string;
}

/**
 * A background task's status and output so far, optionally waiting for it to end. Once a
 * finished task's output has been handed over it is forgotten (its output file stays in /tmp).
 */
export const taskOutputOp = defineOp({
  schema: z.object({
    type: z.literal('task_output'),
    taskId: z.string(),
    block: z.boolean().default(true),
    timeoutMs: z.number().int().nonnegative().default(30_000),
  }),
  mutatesWorkspace: false,
  async run(ctx, op) {
    const tasks = createTaskFiles(ctx.tmpDir);
    let record = await tasks.get(op.taskId);
    if (!record) throw new ToolInputError(toolUseError(`No task found with ID: ${op.taskId}`));
    const deadline = Date.now() + op.timeoutMs;
    while (op.block && record.status === 'running' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, Math.min(POLL_MS, Math.max(1, deadline - Date.now()))));
      record = (await tasks.get(op.taskId)) ?? record;
    }
    const running = record.status === 'running';
    const output = await readTail(tasks.outputFile(op.taskId));
    if (!running) await tasks.forget(op.taskId);
    const result: TaskOutputResult = {
      type: 'task_output', retrieval: running ? (op.block ? 'timeout' : 'not_ready') : 'success',
      taskId: record.taskId, status: record.status, ...(running ? {} : { exitCode: record.exitCode ?? null }), output,
    };
    return { result };
  },
});

async function readTail(file: string): Promise<string> {
  const handle = await fs.open(file, 'r').catch(() => undefined);
  if (!handle) return '';
  try {
    const { size } = await handle.stat();
    const length = Math.min(size, MAX_TASK_OUTPUT_BYTES);
    const buf = Buffer.alloc(length);
    await handle.read(buf, 0, length, size - length);
    return buf.toString('utf8');
  } finally {
    await handle.close();
  }
}
