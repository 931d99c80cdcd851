import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { SandboxOutcome } from '../../isolation/sandbox.ts';

export type TaskStatus = 'running' | 'completed' | 'failed' | 'killed';

export interface TaskRecord {
  taskId: string;
  command: string;
  /** Process group of the sandbox running it. */
  pid: number;
  status: TaskStatus;
  exitCode?: number | null;
}

/**
 * Background commands, kept as files in the workspace's private tmp dir (mounted at /tmp for
 * commands, so `/tmp/tasks/<id>.output` is readable from Bash too). The files are the registry:
 * no process-wide table, and a warm runner finds its tasks again on the next invocation.
 */
export function createTaskFiles(tmpDir: string) {
  const dir = path.join(tmpDir, 'tasks');
  const recordFile = (id: string) => path.join(dir, `${id}.json`);
  const write = async (record: TaskRecord) => {
    await fs.writeFile(`${recordFile(record.taskId)}.tmp`, JSON.stringify(record));
    await fs.rename(`${recordFile(record.taskId)}.tmp`, recordFile(record.taskId));
  };
  return {
    dir,
    newTaskId: () => `b${randomBytes(8).readBigUInt64BE().toString(36).slice(0, 8).padStart(8, '0')}`,
    outputFile: (id: string) => path.join(dir, `${id}.output`),
    /** The output file as commands and the model see it. */
    virtualOutputPath: (id: string) => `/tmp/tasks/${id}.output`,
    async ensureDir() {
      await fs.mkdir(dir, { recursive: true });
    },
    async get(id: string): Promise<TaskRecord | undefined> {
      if (!/^[a-z0-9]{1,32}$/.test(id)) return undefined;
      return fs.readFile(recordFile(id), 'utf8').then((s) => JSON.parse(s) as TaskRecord, () => undefined);
    },
    write,
    async forget(id: string) {
      await fs.rm(recordFile(id), { force: true });
    },
    /** Records the end of a detached command, unless it was stopped first. */
    track(record: TaskRecord, done: Promise<SandboxOutcome>) {
      void done.then(
        async (outcome) => {
          const current = await fs.readFile(recordFile(record.taskId), 'utf8').then((s) => JSON.parse(s) as TaskRecord, () => undefined);
          if (!current || current.status !== 'running') return;
          await write({ ...current, status: outcome.exitCode === 0 ? 'completed' : 'failed', exitCode: outcome.exitCode });
        },
        () => undefined,
      );
    },
  };
}

export type TaskFiles = ReturnType<typeof createTaskFiles>;
