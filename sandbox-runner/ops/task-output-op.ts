import { z } from 'zod';
import { defineOp } from './op.ts';
import type { OpContext } from './op-context.ts';
import { ToolInputError } from '../workspace/tool-input-error.ts';
import { toolUseError } from './files/staleness.ts';
import { createTaskFiles } from './tasks/task-files.ts';
import { createTaskMirror, readTail, TASK_STALE_AFTER_MS, type MirroredTask } from './tasks/task-mirror.ts';
import type { TaskStatus } from './tasks/task-record.ts';

const POLL_MS = 100;
/** Waiting on another runner's task means reading S3; a slower pace keeps the requests few. */
const REMOTE_POLL_MS = 500;

export interface TaskOutputResult {
  type: 'task_output';
  retrieval: 'success' | 'timeout' | 'not_ready';
  taskId: string;
  status: TaskStatus;
  exitCode?: number | null;
  output: string;
  /**
   * Set when the task is known only from its S3 copy, says `running`, and the runner that owned
   * it has not refreshed that copy for this long: its container is most likely gone.
   */
  ownerSilentMs?: number;
}

interface TaskOutputOp {
  taskId: string;
  block: boolean;
  timeoutMs: number;
}

/**
 * A background task's status and output so far, optionally waiting for it to end. Once a
 * finished task's output has been handed over it is forgotten (its output file stays in /tmp).
 * A task this runner does not hold is answered from its S3 copy.
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
    if (!record) return { result: await fromMirror(ctx, op) };
    const deadline = Date.now() + op.timeoutMs;
    while (op.block && record.status === 'running' && Date.now() < deadline) {
      await sleep(Math.min(POLL_MS, Math.max(1, deadline - Date.now())));
      record = (await tasks.get(op.taskId)) ?? record;
    }
    const running = record.status === 'running';
    const mirror = createTaskMirror(ctx.remote);
    if (!running && (await mirror.read(op.taskId).catch(() => undefined))?.forgotten) {
      // Another runner already handed its S3 copy over.
      await tasks.forget(op.taskId);
      throw new ToolInputError(toolUseError(`No task found with ID: ${op.taskId}`));
    }
    const output = (await readTail(tasks.outputFile(op.taskId))) ?? '';
    // The S3 copy follows what the model was told; a failed upload must not fail the answer.
    if (running) await mirror.upload(record, tasks.outputFile(op.taskId)).catch(() => undefined);
    else {
      await tasks.forget(op.taskId);
      await mirror.forget(record).catch(() => undefined);
    }
    const result: TaskOutputResult = {
      type: 'task_output',
      retrieval: running ? (op.block ? 'timeout' : 'not_ready') : 'success',
      taskId: record.taskId,
      status: record.status,
      ...(running ? {} : { exitCode: record.exitCode ?? null }),
      output,
    };
    return { result };
  },
});

/** The answer for a task another runner started: polls its S3 copy, never waits on a silent owner. */
async function fromMirror(ctx: OpContext, op: TaskOutputOp): Promise<TaskOutputResult> {
  const mirror = createTaskMirror(ctx.remote);
  let record = await mirror.get(op.taskId);
  if (!record) throw new ToolInputError(toolUseError(`No task found with ID: ${op.taskId}`));
  const silentMs = (r: MirroredTask) => Date.now() - r.updatedAt;
  const deadline = Date.now() + op.timeoutMs;
  while (op.block && record.status === 'running' && silentMs(record) <= TASK_STALE_AFTER_MS && Date.now() < deadline) {
    await sleep(Math.min(REMOTE_POLL_MS, Math.max(1, deadline - Date.now())));
    record = (await mirror.get(op.taskId)) ?? record;
  }
  const running = record.status === 'running';
  const lost = running && silentMs(record) > TASK_STALE_AFTER_MS;
  const output = await mirror.output(op.taskId);
  if (!running) await mirror.forget(record);
  return {
    type: 'task_output',
    retrieval: running ? (op.block && !lost ? 'timeout' : 'not_ready') : 'success',
    taskId: record.taskId,
    status: record.status,
    ...(running ? {} : { exitCode: record.exitCode ?? null }),
    output,
    ...(lost ? { ownerSilentMs: silentMs(record) } : {}),
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
