import type { OpResult, RunnerOp, RunnerRequest } from '../../sandbox-runner/protocol.ts';
import { DEFAULT_ENVIRONMENT_MAX_BYTES } from '../../sandbox-runner/common/environment-rules.ts';
import { SystemError } from '../shared/errors.ts';
import type { Logger } from '../shared/logger.ts';
import type { TenantUsageStore } from '../stores/tenant-usage.ts';
import { decodeRunnerFailure } from './runner-errors.ts';
import type { RunnerClient, WorkspaceCredentialSource } from './runner-client.ts';
import { withRunnerSlot } from './runner-slot.ts';
import type { RunnerCallSlots } from '../stores/runner-call-slots.ts';

/**
 * The one way the harness runs an op on a workspace: tools (through WorkspaceSession), the
 * workspace API routes and session creation all come here. It builds the runner request
 * (minting the workspace's credentials), sends it through the runner client (tenant id,
 * retries, egress tokens: runner-client.ts and what wraps it) and decodes a refusal into a
 * typed error (runner-errors.ts). Each call holds one of its tenant's runner slots while it runs
 * (runner-slot.ts): past the tenant's cap it waits (a turn) or is refused with 429.
 */
export interface WorkspaceClientDeps {
  runner: RunnerClient;
  workspaceCredentials: WorkspaceCredentialSource;
  /** `environmentMaxBytes`: STRATUS_ENVIRONMENT_MAX_BYTES (@default DEFAULT_ENVIRONMENT_MAX_BYTES). */
  config: { bucket: string; environmentMaxBytes?: number };
  log: Logger;
  /** Each tenant's runner calls in flight, against its cap (runner-slot.ts); without it calls are not counted. */
  runnerSlots?: RunnerCallSlots;
  clock?: () => number;
}

/** Which workspace an op runs on, and as whom. */
export interface OpTarget {
  sessionId: string;
  /**
   * The session's tenant and its storage counter: ops that may store more are refused once the
   * tenant is at its storage quota, and what a publish stores is counted
   * (functions/stores/tenant-usage.ts). Every session's ops name it; removing a deleted
   * session's warm copy, which stores nothing, does not.
   */
  storage?: StorageMeter;
  workspace: { id: string; version: number };
  /** The tenant whose runner calls this one counts against (default: the storage meter's). */
  tenantId?: string;
  /** How long the call may wait for one of the tenant's runner slots before it is refused (default 0: an API request). */
  waitForRunnerSlotMs?: number;
  /** The Bash cwd as the model sees it; the runner's default (/workspace) when absent. */
  cwd?: string;
  /** Session variables for commands. */
  env?: Record<string, string>;
  /** Hosts the session's commands may reach over HTTP(S); none when absent or empty. */
  allowedDomains?: readonly string[];
  /** Whose list that is: the set-up steps' (registries) or the agent's own; the egress grant says which (egress-grants.ts). @default agent */
  networkPhase?: 'setup' | 'agent';
  /**
   * The session's cached environment layer (its key): the runner restores it beside the workspace
   * and keeps new dependency directories out of the workspace (docs/workspaces.md).
   */
  environment?: { key: string };
}

export interface StorageMeter {
  tenantId: string;
  usage: Pick<TenantUsageStore, 'assertRoom' | 'addBehind'>;
  /** Bytes the op's own input already holds against the quota (an import's staged archive). */
  ownReservation?: number;
}

/** What a successful op reports: its result and the version and cwd that are now current. */
export interface OpOutcome<R> {
  result: R;
  version: number;
  cwd: string;
  /** What the op's publish put into S3. */
  bytesUploaded: number;
}

export type ResultOf<T extends OpResult['type']> = Extract<OpResult, { type: T }>;

/** Ops that may publish a version, and so store bytes; the rest read or only touch the runner's disk. */
const MAY_STORE: ReadonlySet<RunnerOp['type']> = new Set([
  'bash',
  'hook_command',
  'write',
  'edit',
  'notebook_edit',
  'create_workspace',
  'import_archive',
  'import_git',
  'git_checkout',
] satisfies RunnerOp['type'][]);

async function buildRunnerRequest(deps: WorkspaceClientDeps, target: OpTarget, op: RunnerOp): Promise<RunnerRequest> {
  const credentials = await deps.workspaceCredentials.forWorkspace(target.workspace.id);
  return {
    sessionId: target.sessionId,
    workspace: { bucket: deps.config.bucket, id: target.workspace.id, version: target.workspace.version, credentials },
    ...(target.cwd !== undefined ? { cwd: target.cwd } : {}),
    ...(target.env !== undefined ? { env: target.env } : {}),
    ...(target.allowedDomains?.length
      ? { network: { allowedDomains: [...target.allowedDomains], ...(target.networkPhase ? { phase: target.networkPhase } : {}) } }
      : {}),
    ...(target.environment ? { environment: await environmentOf(deps, target.environment.key, op) } : {}),
    op,
  };
}

/** The layer as the runner gets it: credentials for that one key, which only a save may write. */
async function environmentOf(deps: WorkspaceClientDeps, key: string, op: RunnerOp): Promise<NonNullable<RunnerRequest['environment']>> {
  const source = deps.workspaceCredentials;
  if (!source.forEnvironment) throw new SystemError('This deployment mints no credentials for cached environments.', 'credentials_unavailable');
  const credentials = await source.forEnvironment(key, op.type === 'environment_save' ? 'write' : 'read');
  return { key, credentials, maxBytes: deps.config.environmentMaxBytes ?? DEFAULT_ENVIRONMENT_MAX_BYTES };
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
  const meter = MAY_STORE.has(op.type) ? target.storage : undefined;
  // The quota check, the request's credentials and the runner slot are independent reads and
  // writes: they run side by side, and the call goes out once all three are in hand.
  const room = meter?.usage.assertRoom(meter.tenantId, meter.ownReservation);
  const request = buildRunnerRequest(deps, target, op);
  request.catch(() => undefined);
  const call = { tenantId: target.tenantId ?? target.storage?.tenantId, waitMs: target.waitForRunnerSlotMs, clock: deps.clock ?? Date.now };
  const inSlot = withRunnerSlot(deps.runnerSlots, call, async () => {
    await room;
    return deps.runner.invoke(await request);
  });
  inSlot.catch(() => undefined);
  // A tenant at its quota hears so at once, as when the check came first, never a busy runner or
  // a wait for a slot; a slot taken meanwhile is given back when the call fails on the check.
  await room;
  const response = await inSlot;
  if (!response.ok) throw decodeRunnerFailure(response, deps.log);
  // Counted behind the result: the tool's answer does not wait for the quota's bookkeeping.
  if (meter && response.bytesUploaded > 0) {
    meter.usage.addBehind(meter.tenantId, target.sessionId, response.bytesUploaded, (err) =>
      deps.log.error('could not count published bytes against the storage quota', {
        sessionId: target.sessionId,
        bytes: response.bytesUploaded,
        error: String(err),
      }),
    );
  }
  return { result: response.result as ResultOf<T>, version: response.version, cwd: response.cwd, bytesUploaded: response.bytesUploaded };
}
