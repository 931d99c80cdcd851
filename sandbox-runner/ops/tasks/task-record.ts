/** One background command, as its record file (task-files.ts) and its S3 copy (task-mirror.ts) hold it. */
export type TaskStatus = 'running' | 'completed' | 'failed' | 'killed';

export interface TaskRecord {
  taskId: string;
  command: string;
  /** Process group of the sandbox running it. */
  pid: number;
  status: TaskStatus;
  exitCode?: number | null;
}
