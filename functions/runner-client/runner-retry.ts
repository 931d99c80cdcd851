import type { RunnerRequest } from '../../sandbox-runner/protocol.ts';

/**
 * Runner ops that may be sent again when a call failed on a reset connection. A reset can come
 * from the connection to the runner (a keep-alive socket the server had just closed) or from
 * inside the runner (its own connection to S3); either way the harness cannot tell whether the
 * op ran, so only ops whose second run cannot double an effect are repeated:
 *
 * - read-only ops change nothing;
 * - `task_stop` of a stopped task changes nothing;
 * - ops that change the workspace publish version N+1 create-only (`If-None-Match: *`), so if the
 *   first attempt got as far as publishing, the second one's publish conflicts and the model
 *   gets a conflict error to reload from, never a doubled edit; `create_workspace` only runs on
 *   version 0, so it is conditional the same way;
 * - `bash` is not repeated: a command's effects reach beyond the workspace (a background task it
 *   started, a request through an allow-listed domain), and those are not create-only.
 */
const RETRYABLE_OPS: Record<RunnerRequest['op']['type'], boolean> = {
  read: true,
  read_instructions: true,
  read_skills: true,
  glob: true,
  grep: true,
  list_files: true,
  export_file: true,
  export_archive: true,
  workspace_diff: true,
  task_output: true,
  task_stop: true,
  // Removing a copy that is already gone changes nothing.
  discard_copy: true,
  // Not worth a second call: the first command starts its own sandbox when none waits.
  warm: false,
  // Reading lockfile hashes and restoring the layer change no workspace version; a layer is
  // saved create-only, so a second save finds the first one's object and keeps it.
  environment_lockfiles: true,
  environment_restore: true,
  environment_save: true,
  create_workspace: true,
  write: true,
  edit: true,
  notebook_edit: true,
  import_archive: true,
  import_git: true,
  git_checkout: true,
  // A push that got through and is sent again pushes the same commit: nothing doubles, but the
  // second attempt makes a new commit object; git_publish is therefore not repeated.
  git_publish: false,
  bash: false,
  // A command hook is a command like Bash's, with the same reach.
  hook_command: false,
};

/** Attempts after the first for a retryable op (each after a short pause). */
export const RUNNER_RESET_RETRIES = 2;

export function isRetryableOnReset(op: RunnerRequest['op']): boolean {
  return RETRYABLE_OPS[op.type] === true;
}

const RESET_CODES = new Set(['ECONNRESET', 'EPIPE']);
const RESET_TEXT = /socket hang up|ECONNRESET|EPIPE/;

/** Whether an error (or the text of a runner's function error) is a connection reset. */
export function isConnectionReset(err: unknown): boolean {
  if (typeof err === 'string') return RESET_TEXT.test(err);
  for (let e = err as { code?: unknown; message?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    if (typeof e.code === 'string' && RESET_CODES.has(e.code)) return true;
    if (typeof e.message === 'string' && RESET_TEXT.test(e.message)) return true;
  }
  return false;
}
