import { z } from 'zod';
import { bashOp, type BashResult } from './bash-op.ts';
import { createWorkspaceOp, type CreateWorkspaceResult } from './create-workspace-op.ts';
import { exportArchiveOp, type ExportArchiveResult } from './export-archive-op.ts';
import { exportFileOp, type ExportFileResult } from './export-file-op.ts';
import { importArchiveOp, type ImportArchiveResult } from './import-archive-op.ts';
import { importGitOp, type ImportGitResult } from './import-git-op.ts';
import { listFilesOp, type ListFilesResult } from './list-files-op.ts';
import { readOp, type ReadResult } from './read-op.ts';

/** Every operation the runner performs. This file only lists them. */
export const RUNNER_OPS = {
  bash: bashOp,
  read: readOp,
  create_workspace: createWorkspaceOp,
  import_archive: importArchiveOp,
  import_git: importGitOp,
  list_files: listFilesOp,
  export_file: exportFileOp,
  export_archive: exportArchiveOp,
} as const;

export const runnerOpSchema = z.discriminatedUnion('type', [
  bashOp.schema,
  readOp.schema,
  createWorkspaceOp.schema,
  importArchiveOp.schema,
  importGitOp.schema,
  listFilesOp.schema,
  exportFileOp.schema,
  exportArchiveOp.schema,
]);

export type RunnerOp = z.input<typeof runnerOpSchema>;
export type OpResult =
  | BashResult
  | ReadResult
  | CreateWorkspaceResult
  | ImportArchiveResult
  | ImportGitResult
  | ListFilesResult
  | ExportFileResult
  | ExportArchiveResult;
export type {
  BashResult,
  CreateWorkspaceResult,
  ExportArchiveResult,
  ExportFileResult,
  ImportArchiveResult,
  ImportGitResult,
  ListFilesResult,
  ReadResult,
};
