import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { SandboxOutcome } from '../../isolation/sandbox.ts';
import { TASK_SYNC_INTERVAL_MS, type TaskMirror } from './task-mirror.ts';
import type { TaskRecord } from './task-record.ts';


/**
 * Background commands, kept as files in the workspace's private tmp dir (mounted at /tmp for
 * commands, so `/tmp/tasks/<id>.output` is readable from Bash too). The files are the registry:
 * no process-wide table, and a warm runner finds its tasks again on the next invocation. Other
 * runners see tasks through their S3 copy (task-mirror.ts).
 */
export function createTaskFiles(tmpDir: string) {
  const dir = path.join(tmpDir, 'tasks');
  const recordFile = (id: string) => path.join(dir, `${id}.json`);
  const outputFile = (id: string) => path.join(dir, `${id}.output`);
  const get = async (id: string): Promise<TaskRecord | undefined> => {
    if (!/^[a-z0-9]{1,32}$/.test(id)) return undefined;
    return fs.readFile(recordFile(id), 'utf8').then((s) => JSON.parse(s) as TaskRecord, () => undefined);
  };
  const write = async (record: TaskRecord) => {
    await fs.writeFile(`${recordFile(record.taskId)}.tmp`, JSON.stringify(record));
    await fs.rename(`${recordFile(record.taskId)}.tmp`, recordFile(record.taskId));
  };
  return {
    dir,
    newTaskId: () => `b${randomBytes(8).readBigUInt64BE().toString(36).slice(0, 8).padStart(8, '0')}`,
    outputFile,
    /** The output file as commands and the model see it. */
    virtualOutputPath: (id: string) => `/tmp/tasks/${id}.output`,
    async ensureDir() {
      await fs.mkdir(dir, { recursive: true });
    },
    get,
    write,
    async forget(id: string) {
      await fs.rm(recordFile(id), { force: true });
    },
    /**
     * Records the end of a detached command, unless it was stopped first. With a mirror, the task
     * is also copied to S3 now, every TASK_SYNC_INTERVAL_MS while it runs, and at its end; the
     * local record turns final only once S3 has the final copy, so a TaskOutput that hands the
     * task over (and marks it forgotten in S3) always comes after the last upload. Resolves once
     * the first copy is stored.
     */
    async track(record: TaskRecord, done: Promise<SandboxOutcome>, mirror?: TaskMirror): Promise<void> {
      let finished = false;
      let chain = Promise.resolve();
      const sync = (r: TaskRecord) => {
        // An upload for a still-running state queued after the end would undo the final copy.
        chain = chain.then(() => (finished && r.status === 'running' ? undefined : mirror?.upload(r, outputFile(r.taskId)))).catch(() => undefined);
        return chain;
      };
      const timer = mirror
        ? setInterval(() => {
            void get(record.taskId).then((current) => {
              if (current?.status === 'running') void sync(current);
            });
          }, TASK_SYNC_INTERVAL_MS)
        : undefined;
      // The runner process may end while a task runs (tests, local restarts); it must not wait on this.
      timer?.unref();
      void done.then(
        async (outcome) => {
          finished = true;
          clearInterval(timer);
          const current = await get(record.taskId);
          if (!current || current.status !== 'running') return;
          const final: TaskRecord = { ...current, status: outcome.exitCode === 0 ? 'completed' : 'failed', exitCode: outcome.exitCode };
          if (mirror) await sync(final);
          if ((await get(record.taskId))?.status === 'running') await write(final);
        },
        () => {
          finished = true;
          clearInterval(timer);
        },
      );
      if (mirror) await sync(record);
    },
  };
}

export type TaskFiles = ReturnType<typeof createTaskFiles>;
