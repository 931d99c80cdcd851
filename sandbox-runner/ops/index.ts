import { z } from 'zod';
import { bashOp, type BashResult } from './bash-op.ts';
import { createWorkspaceOp, type CreateWorkspaceResult } from './create-workspace-op.ts';
import { discardCopyOp, type DiscardCopyResult } from './discard-copy-op.ts';
import { environmentLockfilesOp, type EnvironmentLockfilesResult } from './environment-lockfiles-op.ts';
import { environmentRestoreOp, type EnvironmentRestoreResult } from './environment-restore-op.ts';
import { environmentSaveOp, type EnvironmentSaveResult } from './environment-save-op.ts';
import { exportArchiveOp, type ExportArchiveResult } from './export-archive-op.ts';
import { exportFileOp, type ExportFileResult } from './export-file-op.ts';
import { importArchiveOp, type ImportArchiveResult } from './import-archive-op.ts';
import { importGitOp, type ImportGitResult } from './import-git-op.ts';
import { gitCheckoutOp, type GitCheckoutResult } from './git-checkout-op.ts';
import { gitPublishOp, type GitPublishResult } from './git-publish-op.ts';
import { listFilesOp, type ListFilesResult } from './list-files-op.ts';
import { editOp, type EditResult } from './edit-op.ts';
import { notebookEditOp, type NotebookEditResult } from './notebook-edit-op.ts';
import { globOp, type GlobResult } from './glob-op.ts';
import { grepOp, type GrepResult } from './grep-op.ts';
import { hookCommandOp, type HookCommandResult } from './hook-command-op.ts';
import { readOp, type ReadResult } from './read-op.ts';
import { readInstructionsOp, type ReadInstructionsResult } from './read-instructions-op.ts';
import { readSkillsOp, type ReadSkillsResult } from './read-skills-op.ts';
import { taskOutputOp, type TaskOutputResult } from './task-output-op.ts';
import { taskStopOp, type TaskStopResult } from './task-stop-op.ts';
import { writeOp, type WriteResult } from './write-op.ts';
import { workspaceDiffOp, type WorkspaceDiffResult } from './workspace-diff-op.ts';
import { warmOp, type WarmResult } from './warm-op.ts';

/** Every operation the runner performs. This file only lists them. */
export const RUNNER_OPS = {
  bash: bashOp,
  read: readOp,
  read_instructions: readInstructionsOp,
  read_skills: readSkillsOp,
  write: writeOp,
  edit: editOp,
  notebook_edit: notebookEditOp,
  glob: globOp,
  grep: grepOp,
  hook_command: hookCommandOp,
  task_output: taskOutputOp,
  task_stop: taskStopOp,
  create_workspace: createWorkspaceOp,
  import_archive: importArchiveOp,
  import_git: importGitOp,
  git_checkout: gitCheckoutOp,
  git_publish: gitPublishOp,
  list_files: listFilesOp,
  export_file: exportFileOp,
  export_archive: exportArchiveOp,
  workspace_diff: workspaceDiffOp,
  discard_copy: discardCopyOp,
  environment_lockfiles: environmentLockfilesOp,
  environment_restore: environmentRestoreOp,
  environment_save: environmentSaveOp,
  warm: warmOp,
} as const;

export const runnerOpSchema = z.discriminatedUnion('type', [
  bashOp.schema,
  readOp.schema,
  readInstructionsOp.schema,
  readSkillsOp.schema,
  writeOp.schema,
  editOp.schema,
  notebookEditOp.schema,
  globOp.schema,
  grepOp.schema,
  hookCommandOp.schema,
  taskOutputOp.schema,
  taskStopOp.schema,
  createWorkspaceOp.schema,
  importArchiveOp.schema,
  importGitOp.schema,
  gitCheckoutOp.schema,
  gitPublishOp.schema,
  listFilesOp.schema,
  exportFileOp.schema,
  exportArchiveOp.schema,
  workspaceDiffOp.schema,
  discardCopyOp.schema,
  environmentLockfilesOp.schema,
  environmentRestoreOp.schema,
  environmentSaveOp.schema,
  warmOp.schema,
]);

export type RunnerOp = z.input<typeof runnerOpSchema>;
export type OpResult =
  | BashResult
  | ReadResult
  | ReadInstructionsResult
  | ReadSkillsResult
  | WriteResult
  | EditResult
  | NotebookEditResult
  | GlobResult
  | GrepResult
  | HookCommandResult
  | TaskOutputResult
  | TaskStopResult
  | CreateWorkspaceResult
  | ImportArchiveResult
  | ImportGitResult
  | GitCheckoutResult
  | GitPublishResult
  | ListFilesResult
  | ExportFileResult
  | ExportArchiveResult
  | WorkspaceDiffResult
  | DiscardCopyResult
  | EnvironmentLockfilesResult
  | EnvironmentRestoreResult
  | EnvironmentSaveResult
  | WarmResult;
export type {
  BashResult,
  CreateWorkspaceResult,
  DiscardCopyResult,
  EditResult,
  EnvironmentLockfilesResult,
  EnvironmentRestoreResult,
  EnvironmentSaveResult,
  ExportArchiveResult,
  ExportFileResult,
  GlobResult,
  GrepResult,
  HookCommandResult,
  ImportArchiveResult,
  ImportGitResult,
  GitCheckoutResult,
  GitPublishResult,
  ListFilesResult,
  NotebookEditResult,
  ReadResult,
  ReadInstructionsResult,
  ReadSkillsResult,
  TaskOutputResult,
  TaskStopResult,
  WarmResult,
  WriteResult,
  WorkspaceDiffResult,
};
export type { FileStateEntry } from './files/file-state.ts';
export type { InstructionFile } from './files/instruction-files.ts';
export type { SkillFile } from './read-skills-op.ts';
export type { NotebookCell } from './files/notebook.ts';
export type { LayerOutcome } from '../workspace/environment-layer.ts';
