import type { OpResult, RunnerOp, RunnerRequest } from '../../sandbox-runner/protocol.ts';
import type { Logger } from '../shared/logger.ts';
import { decodeRunnerFailure } from './runner-errors.ts';
import type { RunnerClient, WorkspaceCredentialSource } from './runner-client.ts';

/**
 * The one way the harness runs an op on a workspace: tools (through WorkspaceSession), the
 * workspace API routes and session creation all come here. It builds the runner request
 * (minting the workspace's credentials), sends it through the runner client (tenant id,
 * retries, egress tokens: runner-client.ts and what wraps it) and decodes a refusal into a
 * typed error (runner-errors.ts).
 */
export interface WorkspaceClientDeps {
  runner: RunnerClient;
  workspaceCredentials: WorkspaceCredentialSource;
  config: { bucket: string };
  log: Logger;
}

/** Which workspace an op runs on, and as whom. */
export interface OpTarget {
  sessionId: string;
  workspace: { id: string; version: number };
  /** The Bash cwd as the model sees it; the runner's default (/workspace) when absent. */
  cwd?: string;
  /** Session variables for commands. */
  env?: Record<string, string>;
  /** Hosts the session's commands may reach over HTTP(S); none when absent or empty. */
  allowedDomains?: readonly string[];
}

/** What a successful op reports: its result and the version and cwd that are now current. */
export interface OpOutcome<R> {
  result: R;
  version: number;
  cwd: string;
}

export type ResultOf<T extends OpResult['type']> = Extract<OpResult, { type: T }>;

async function buildRunnerRequest(deps: WorkspaceClientDeps, target: OpTarget, op: RunnerOp): Promise<RunnerRequest> {
  const credentials = await deps.workspaceCredentials.forWorkspace(target.workspace.id);
  return {
    sessionId: target.sessionId,
    workspace: { bucket: deps.config.bucket, id: target.workspace.id, version: target.workspace.version, credentials },
    ...(target.cwd !== undefined ? { cwd: target.cwd } : {}),
    ...(target.env !== undefined ? { env: target.env } : {}),
    ...(target.allowedDomains?.length ? { network: { allowedDomains: [...target.allowedDomains] } } : {}),
    op,
  };
}

/**
 * Runs one op. A refusal throws a WorkspaceInputError, WorkspaceLimitError,
 * WorkspaceConflictError (with the newest version) or RunnerRefusedError; a runner that
 * failed outright throws a RunnerFailedError.
 */
export async function runOp<T extends OpResult['type']>(
  deps: WorkspaceClientDeps,
  target: OpTarget,
  op: RunnerOp & { type: T },
): Promise<OpOutcome<ResultOf<T>>> {
  const response = await deps.runner.invoke(await buildRunnerRequest(deps, target, op));
  if (!response.ok) throw decodeRunnerFailure(response, deps.log);
  return { result: response.result as ResultOf<T>, version: response.version, cwd: response.cwd };
}
