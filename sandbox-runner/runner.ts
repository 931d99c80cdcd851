import type { S3Client } from '@aws-sdk/client-s3';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Sandbox } from './isolation/sandbox.ts';
import { NO_STACK_ENDPOINTS } from './isolation/stack-endpoints.ts';
import { RUNNER_OPS } from './ops/index.ts';
import type { RunnerOpDefinition } from './ops/op.ts';
import type { GitImportOptions, OpContext, RunnerLimits } from './ops/op-context.ts';
import { ToolInputError } from './workspace/tool-input-error.ts';
import { runnerRequestSchema, type OpResult, type ParsedRunnerRequest, type RunnerResponse, type StorageCredentials } from './protocol.ts';
import { createPathMapper, VIRTUAL_ROOT } from './common/virtual-paths.ts';
import { hideHostPaths, RUNNER_STORAGE } from './workspace/host-paths.ts';
import { DEFAULT_WORKSPACE_LIMITS, type WorkspaceLimits } from './common/workspace-limits.ts';
import { LimitExceededError } from './workspace/limits.ts';
import { DEFAULT_ARCHIVE_LIMITS, type ArchiveLimits } from './workspace/archive-guards.ts';
import { LocalCopy, type LocalState, type SnapshotPolicy } from './workspace/local-copy.ts';
import { createWarmCopies, type WarmCopies } from './workspace/warm-copies.ts';
import type { LayerTarget } from './workspace/environment-layer.ts';
import { RemoteWorkspace, VersionConflictError, WorkspaceMissingError } from './workspace/remote-workspace.ts';

export interface RunnerDeps {
  /** Where warm workspace copies live (local disk; /tmp in Lambda). */
  rootDir: string;
  /** Builds an S3 client for the credentials that arrive with each request. */
  s3ForCredentials(credentials: StorageCredentials): S3Client;
  sandbox: Sandbox;
  limits: RunnerLimits;
  /** @default DEFAULT_WORKSPACE_LIMITS */
  workspaceLimits?: WorkspaceLimits;
  /** What an archive import refuses besides the workspace limits (expansion, depth, entries). @default DEFAULT_ARCHIVE_LIMITS */
  archiveLimits?: ArchiveLimits;
  /**
   * Warm copies kept on disk. In Lambda this is 1: a container holds one tenant's workspace and
   * wipes it when another arrives. A local runner serving many sessions may keep a few (LRU).
   * Copies in use are never removed, so while more workspaces than this are busy, more stay.
   * @default 1
   */
  maxWarmWorkspaces?: number;
  /** @default { allowHttp: false, timeoutMs: 120_000 } */
  git?: Partial<GitImportOptions>;
  /** When to write a full snapshot besides the delta. @default DEFAULT_SNAPSHOT_POLICY */
  snapshots?: SnapshotPolicy;
  /** Where failures that no caller waits for go (a background eviction). @default a JSON line on stderr */
  log?: (message: string, err: unknown) => void;
}

export const DEFAULT_RUNNER_LIMITS: RunnerLimits = {
  // Lambda answers at most 6 MB; the harness shows the model 30,000 characters of it anyway.
  maxOutputBytes: 4 * 1024 * 1024,
  maxReadBytes: 64 * 1024 * 1024,
};

export type Runner = (event: unknown) => Promise<RunnerResponse>;

/** The runner with its warm copies exposed (their sizes show that nothing grows per workspace). */
export type RunnerWithCopies = Runner & { warmCopies: WarmCopies };

/**
 * The runner's one entry point, shared by the container-image Lambda and the local Invoke
 * server. Everything that touches one workspace's copy (materialising, the op, publishing,
 * evicting it) runs on that workspace's queue, one at a time; different workspaces run in
 * parallel (workspace/warm-copies.ts).
 */
export function createRunner(deps: RunnerDeps): RunnerWithCopies {
  const stateCache = new Map<string, LocalState>();
  const workspacesDir = path.join(deps.rootDir, 'workspaces');
  const log = deps.log ?? logToStderr;
  const copies = createWarmCopies({
    workspacesDir,
    maxWarm: deps.maxWarmWorkspaces ?? 1,
    states: stateCache,
    onError: (message, err) => log(message, err),
    beforeRemove: async (dir) => deps.sandbox.discardWarm?.(dir),
  });

  const runner: Runner = async (event) => {
    const parsed = runnerRequestSchema.safeParse(event);
    if (!parsed.success) {
      return { ok: false, error: { kind: 'bad_request', message: `Invalid runner request: ${parsed.error.message}` } };
    }
    const request = parsed.data;
    let local: LocalCopy | undefined;
    return copies
      .use(request.workspace.id, async (dir) => {
        // Only the runner's own user may enter its directories (commands run in namespaces).
        await fs.mkdir(workspacesDir, { recursive: true, mode: 0o700 });
        local = new LocalCopy(dir, deps.workspaceLimits ?? DEFAULT_WORKSPACE_LIMITS, stateCache, deps.snapshots, layerTarget(deps, request));
        return execute(deps, local, request, (until) => copies.retain(request.workspace.id, until), log);
      })
      .catch((err: unknown) => {
        const inWorkspace = local ? [[local.tree, VIRTUAL_ROOT] as const, [tmpDirOf(local), '/tmp'] as const] : [];
        throw hideHostPaths(err, [...inWorkspace, [deps.rootDir, RUNNER_STORAGE]]);
      });
  };
  return Object.assign(runner, { warmCopies: copies });
}

/** The request's environment layer, reached with its own credentials (never the workspace's). */
function layerTarget(deps: RunnerDeps, request: ParsedRunnerRequest): LayerTarget | undefined {
  const env = request.environment;
  if (!env) return undefined;
  return {
    key: env.key,
    maxBytes: env.maxBytes,
    store: new RemoteWorkspace(deps.s3ForCredentials(env.credentials), request.workspace.bucket, request.workspace.id),
  };
}

/** What an op that does not need the copy reports as its sync: nothing was read. */
const NOT_MATERIALIZED = { mode: 'none', changedPaths: 0 } as const;

/** A workspace's private tmp dir (the sandbox's /tmp), beside its tree. */
const tmpDirOf = (local: LocalCopy) => path.join(local.dir, 'tmp');

function logToStderr(message: string, err: unknown): void {
  process.stderr.write(`${JSON.stringify({ level: 'error', msg: message, error: String(err) })}\n`);
}

async function execute(
  deps: RunnerDeps,
  local: LocalCopy,
  request: ParsedRunnerRequest,
  retain: (until: Promise<unknown>) => void,
  log: (message: string, err: unknown) => void,
): Promise<RunnerResponse> {
  const { workspace } = request;
  const remote = new RemoteWorkspace(deps.s3ForCredentials(workspace.credentials), workspace.bucket, workspace.id);

  try {
    const startedAt = performance.now();
    const definition = RUNNER_OPS[request.op.type] as RunnerOpDefinition;
    const needsCopy = definition.needsCopy ?? true;
    const sync = needsCopy ? await local.materialize(remote, workspace.version) : NOT_MATERIALIZED;
    if (needsCopy) await fs.mkdir(tmpDirOf(local), { recursive: true });
    const ctx = opContext(deps, { request, local, remote, retain });
    const synced = performance.now();
    // Before anything may touch the tree, forget that it matches a version: a crash from here on
    // makes the next call rebuild instead of trusting the record.
    const base = definition.mutatesWorkspace ? await local.markDirty() : undefined;
    const outcome = await definition.run(ctx, request.op);
    const ran = performance.now();
    const published = base ? await local.publish(remote, base, log) : { version: workspace.version, changedPaths: 0, bytesUploaded: 0 };
    return {
      ok: true,
      result: outcome.result as OpResult,
      cwd: outcome.cwd ?? request.cwd,
      version: published.version,
      changedFiles: published.changedPaths,
      bytesUploaded: published.bytesUploaded,
      sync,
      timings: { syncMs: synced - startedAt, opMs: ran - synced, publishMs: performance.now() - ran },
    };
  } catch (err) {
    if (err instanceof ToolInputError) return { ok: false, error: { kind: 'tool_error', message: err.message } };
    if (err instanceof VersionConflictError) return conflict(local, remote, err, log);
    if (err instanceof LimitExceededError) return { ok: false, error: { kind: 'limit', message: err.message } };
    if (err instanceof WorkspaceMissingError) return { ok: false, error: { kind: 'bad_request', message: err.message } };
    throw err;
  }
}

function opContext(
  deps: RunnerDeps,
  at: { request: ParsedRunnerRequest; local: LocalCopy; remote: RemoteWorkspace; retain: (until: Promise<unknown>) => void },
): OpContext {
  return {
    request: at.request,
    paths: createPathMapper(at.local.tree),
    tmpDir: tmpDirOf(at.local),
    sandbox: deps.sandbox,
    limits: deps.limits,
    remote: at.remote,
    local: at.local,
    workspaceLimits: deps.workspaceLimits ?? DEFAULT_WORKSPACE_LIMITS,
    archiveLimits: deps.archiveLimits ?? DEFAULT_ARCHIVE_LIMITS,
    git: { allowHttp: false, timeoutMs: 120_000, stackEndpoints: NO_STACK_ENDPOINTS, ...deps.git },
    retain: at.retain,
  };
}

/**
 * Someone else published the version this op's change claimed. The change is dropped (the copy
 * stays dirty, so the next call rebuilds it from S3) and the caller learns the newest version,
 * so it moves on to it instead of retrying from a version that can never be published again.
 */
async function conflict(
  local: LocalCopy,
  remote: RemoteWorkspace,
  err: VersionConflictError,
  log: (message: string, err: unknown) => void,
): Promise<RunnerResponse> {
  await local.forget().catch((e: unknown) => log(`could not mark workspace ${remote.id} dirty after a conflict`, e));
  // The version that beat this one exists for sure; a failed listing falls back to it.
  const latestVersion = await remote.latestVersion(err.version).catch((e: unknown) => {
    log(`could not list the versions of workspace ${remote.id}`, e);
    return err.version;
  });
  return {
    ok: false,
    error: {
      kind: 'conflict',
      message: `Your change was not saved: workspace ${remote.id} changed concurrently and is now at version ${latestVersion}. Re-read the files you need and retry.`,
      latestVersion,
    },
  };
}
