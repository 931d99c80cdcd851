import type { RunnerFailure } from '../../sandbox-runner/protocol.ts';
import { ConflictError, LimitError, RunnerError, UserError } from '../shared/errors.ts';
import type { Logger } from '../shared/logger.ts';

/**
 * The runner's refusals as typed errors, decoded once here for every caller: a tool gives the
 * message to the model as an error tool_result, an API route answers with the class's status,
 * session creation names the field it came from.
 */

/** `tool_error`: the op's input was wrong in a way the caller can fix (a missing file, a path outside). */
export class WorkspaceInputError extends UserError {}

/** `limit`: a workspace limit (size, file count, one file's size) was hit; nothing was saved. */
export class WorkspaceLimitError extends LimitError {
  constructor(message: string) {
    super(message, 'workspace_limit');
  }
}

/** `conflict`: the workspace changed under the op; nothing was saved, and `latestVersion` is its newest version. */
export class WorkspaceConflictError extends ConflictError {
  constructor(
    message: string,
    readonly latestVersion: number | undefined,
  ) {
    super(message, 'workspace_conflict');
  }
}

/** `bad_request`: the runner refused a request we built (a harness bug, or a version it cannot read). */
export class RunnerRefusedError extends RunnerError {
  constructor() {
    super('The sandbox runner refused the request; see the server logs.', 'internal_error');
  }
}

/** Thrown when the runner itself failed (crashed, timed out, unreachable): an infrastructure error. */
export class RunnerFailedError extends RunnerError {}

export type RunnerRefusal = WorkspaceInputError | WorkspaceLimitError | WorkspaceConflictError | RunnerRefusedError;

/**
 * The typed error for a runner's `ok: false` answer. A `bad_request`'s details (the runner's
 * schema errors) are for the logs, not for the caller or the model.
 */
export function decodeRunnerFailure(failure: RunnerFailure, log: Logger): RunnerRefusal {
  const { kind, message } = failure.error;
  switch (kind) {
    case 'tool_error':
      return new WorkspaceInputError(message);
    case 'limit':
      return new WorkspaceLimitError(message);
    case 'conflict':
      return new WorkspaceConflictError(message, failure.error.latestVersion);
    case 'bad_request':
      log.error('the runner refused a request', { error: message });
      return new RunnerRefusedError();
    default:
      return unknownKind(kind);
  }
}

function unknownKind(kind: never): never {
  throw new RunnerError(`The sandbox runner answered with an unknown error kind ${JSON.stringify(kind)}.`);
}
