import { promises as fs } from 'node:fs';
import { isNotFound, type RemoteWorkspace } from '../../workspace/remote-workspace.ts';
import type { TaskRecord, TaskStatus } from './task-record.ts';

/** How often the runner that owns a running task refreshes its S3 copy. */
export const TASK_SYNC_INTERVAL_MS = 5_000;
/** A running task whose copy is older than this has no runner keeping it up to date any more. */
export const TASK_STALE_AFTER_MS = 6 * TASK_SYNC_INTERVAL_MS;
/** The most of a task's output kept and shown (its end). */
export const MAX_TASK_OUTPUT_BYTES = 1024 * 1024;

/** A task as stored in S3, for runners that do not hold it. */
export interface MirroredTask {
  taskId: string;
  command: string;
  status: TaskStatus;
  exitCode?: number | null;
  /** When the owning runner last wrote this copy (epoch ms). */
  updatedAt: number;
  /** Its output was handed to the model (or it was stopped): TaskOutput no longer knows it. */
  forgotten?: boolean;
}

/**
 * The durable copy of background tasks, under the workspace's own prefix (the only place its
 * scoped credentials reach): `tasks/{id}.output` (the end of the output) and `tasks/{id}.json`
 * (the record). The runner that owns a task writes both; any runner can read them, so TaskOutput
 * works from a container that never saw the task.
 */
export function createTaskMirror(remote: RemoteWorkspace) {
  const recordKey = (id: string) => remote.key(`tasks/${id}.json`);
  const outputKey = (id: string) => remote.key(`tasks/${id}.output`);
  const putRecord = (mirrored: MirroredTask) => remote.put(recordKey(mirrored.taskId), JSON.stringify(mirrored), { contentType: 'application/json' });
  return {
    /** Output first, then the record: a record never claims more than the output stored. */
    async upload(record: TaskRecord, outputFile: string, opts: { forgotten?: boolean } = {}): Promise<void> {
      const output = await readTail(outputFile);
      if (output !== undefined) {
        const body = Buffer.from(output, 'utf8');
        // An explicit length: the SDK warns about (and streams) bodies it cannot measure, such as an empty one.
        await remote.put(outputKey(record.taskId), body, { contentLength: body.length, contentType: 'text/plain; charset=utf-8' });
      }
      await putRecord({
        taskId: record.taskId,
        command: record.command,
        status: record.status,
        ...(record.exitCode !== undefined ? { exitCode: record.exitCode } : {}),
        updatedAt: Date.now(),
        ...(opts.forgotten ? { forgotten: true } : {}),
      });
    },
    /** Marks a task as handed over, so no runner reports it again. */
    async forget(record: Pick<TaskRecord, 'taskId' | 'command' | 'status'>): Promise<void> {
      await putRecord({ taskId: record.taskId, command: record.command, status: record.status, updatedAt: Date.now(), forgotten: true });
    },
    /** The stored record, forgotten or not. */
    async read(id: string): Promise<MirroredTask | undefined> {
      if (!/^[a-z0-9]{1,32}$/.test(id)) return undefined;
      const text = await getText(remote, recordKey(id));
      return text === undefined ? undefined : (JSON.parse(text) as MirroredTask);
    },
    /** The task if TaskOutput may still report it. */
    async get(id: string): Promise<MirroredTask | undefined> {
      const record = await this.read(id);
      return record?.forgotten ? undefined : record;
    },
    async output(id: string): Promise<string> {
      return (await getText(remote, outputKey(id))) ?? '';
    },
  };
}

async function getText(remote: RemoteWorkspace, key: string): Promise<string | undefined> {
  try {
    const body = await remote.getStream(key);
    const chunks: Buffer[] = [];
    for await (const chunk of body) chunks.push(Buffer.from(chunk as Uint8Array));
    return Buffer.concat(chunks).toString('utf8');
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

export type TaskMirror = ReturnType<typeof createTaskMirror>;

/** The last MAX_TASK_OUTPUT_BYTES of a file; undefined when it is gone. */
export async function readTail(file: string): Promise<string | undefined> {
  const handle = await fs.open(file, 'r').catch(() => undefined);
  if (!handle) return undefined;
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
