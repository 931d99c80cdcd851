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
  const records: TaskRecords = {
    get: (id) => readRecord(dir, id),
    write: (record) => writeRecord(dir, record),
    outputFile: (id) => path.join(dir, `${id}.output`),
  };
  return {
    dir,
    newTaskId: () => `b${randomBytes(8).readBigUInt64BE().toString(36).slice(0, 8).padStart(8, '0')}`,
    outputFile: records.outputFile,
    /** The output file as commands and the model see it. */
    virtualOutputPath: (id: string) => `/tmp/tasks/${id}.output`,
    async ensureDir() {
      await fs.mkdir(dir, { recursive: true });
    },
    get: records.get,
    write: records.write,
    async forget(id: string) {
      await fs.rm(recordFile(dir, id), { force: true });
    },
    /**
     * Records the end of a detached command, unless it was stopped first. With a mirror, the task
     * is also copied to S3 now, every TASK_SYNC_INTERVAL_MS while it runs, and at its end; the
     * local record turns final only once S3 has the final copy, so a TaskOutput that hands the
     * task over (and marks it forgotten in S3) always comes after the last upload. Resolves once
     * the first copy is stored.
     */
    track: (record: TaskRecord, done: Promise<SandboxOutcome>, mirror?: TaskMirror): Promise<void> => trackTask(records, record, done, mirror),
  };
}

export type TaskFiles = ReturnType<typeof createTaskFiles>;

interface TaskRecords {
  get(id: string): Promise<TaskRecord | undefined>;
  write(record: TaskRecord): Promise<void>;
  outputFile(id: string): string;
}

const recordFile = (dir: string, id: string) => path.join(dir, `${id}.json`);

async function readRecord(dir: string, id: string): Promise<TaskRecord | undefined> {
  if (!/^[a-z0-9]{1,32}$/.test(id)) return undefined;
  return fs.readFile(recordFile(dir, id), 'utf8').then(
    (s) => JSON.parse(s) as TaskRecord,
    () => undefined,
  );
}

async function writeRecord(dir: string, record: TaskRecord): Promise<void> {
  await fs.writeFile(`${recordFile(dir, record.taskId)}.tmp`, JSON.stringify(record));
  await fs.rename(`${recordFile(dir, record.taskId)}.tmp`, recordFile(dir, record.taskId));
}

async function trackTask(records: TaskRecords, record: TaskRecord, done: Promise<SandboxOutcome>, mirror?: TaskMirror): Promise<void> {
  let finished = false;
  let chain = Promise.resolve();
  const sync = (r: TaskRecord) => {
    // An upload for a still-running state queued after the end would undo the final copy.
    chain = chain.then(() => (finished && r.status === 'running' ? undefined : mirror?.upload(r, records.outputFile(r.taskId)))).catch(() => undefined);
    return chain;
  };
  const timer = mirror
    ? setInterval(() => {
        void records.get(record.taskId).then((current) => {
          if (current?.status === 'running') void sync(current);
        });
      }, TASK_SYNC_INTERVAL_MS)
    : undefined;
  // The runner process may end while a task runs (tests, local restarts); it must not wait on this.
  timer?.unref();
  const stop = () => {
    finished = true;
    clearInterval(timer);
  };
  void done.then(async (outcome) => {
    stop();
    const current = await records.get(record.taskId);
    if (current?.status !== 'running') return;
    const final: TaskRecord = { ...current, status: outcome.exitCode === 0 ? 'completed' : 'failed', exitCode: outcome.exitCode };
    if (mirror) await sync(final);
    if ((await records.get(record.taskId))?.status === 'running') await records.write(final);
  }, stop);
  if (mirror) await sync(record);
}
