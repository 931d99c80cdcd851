import type { S3Client } from '@aws-sdk/client-s3';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Sandbox } from './isolation/sandbox.ts';
import { RUNNER_OPS } from './ops/index.ts';
import type { RunnerOpDefinition } from './ops/op.ts';
import { ToolInputError, type GitImportOptions, type OpContext, type RunnerLimits } from './ops/op-context.ts';
import { runnerRequestSchema, type OpResult, type ParsedRunnerRequest, type RunnerResponse, type StorageCredentials } from './protocol.ts';
import { createPathMapper } from './workspace/virtual-paths.ts';
import { DEFAULT_WORKSPACE_LIMITS, WorkspaceLimitError, type WorkspaceLimits } from './workspace/limits.ts';
import { LocalCopy, type LocalState, type SnapshotPolicy } from './workspace/local-copy.ts';
import { RemoteWorkspace, WorkspaceConflictError, WorkspaceMissingError } from './workspace/remote-workspace.ts';

export interface RunnerDeps {
  /** Where warm workspace copies live (local disk; /tmp in Lambda). */
  rootDir: string;
  /** Builds an S3 client for the credentials that arrive with each request. */
  s3ForCredentials(credentials: StorageCredentials): S3Client;
  sandbox: Sandbox;
  limits: RunnerLimits;
  /** @default DEFAULT_WORKSPACE_LIMITS */
  workspaceLimits?: WorkspaceLimits;
  /**
   * Warm copies kept on disk. In Lambda this is 1: a container holds one tenant's workspace and
   * wipes it when another arrives. A local runner serving many sessions may keep a few (LRU).
   * @default 1
   */
  maxWarmWorkspaces?: number;
  /** @default { allowHttp: false, timeoutMs: 120_000 } */
  git?: Partial<GitImportOptions>;
  /** When to write a full snapshot besides the delta. @default DEFAULT_SNAPSHOT_POLICY */
  snapshots?: SnapshotPolicy;
}

export const DEFAULT_RUNNER_LIMITS: RunnerLimits = {
  // Lambda answers at most 6 MB; the harness shows the model 30,000 characters of it anyway.
  maxOutputBytes: 4 * 1024 * 1024,
  maxReadBytes: 64 * 1024 * 1024,
};

export type Runner = (event: unknown) => Promise<RunnerResponse>;

/**
 * The runner's one entry point, shared by the container-image Lambda and the local Invoke
 * server. Operations on one workspace run one at a time; different workspaces in parallel.
 */
export function createRunner(deps: RunnerDeps): Runner {
  const queues = new Map<string, Promise<unknown>>();
  const lastUsed = new Map<string, number>();
  const stateCache = new Map<string, LocalState>();
  const workspacesDir = path.join(deps.rootDir, 'workspaces');

  /** Wipes the least recently used idle copies beyond the warm limit (never one in use). */
  async function evict(current: string): Promise<void> {
    const max = Math.max(1, deps.maxWarmWorkspaces ?? 1);
    const present = await fs.readdir(workspacesDir).catch(() => [] as string[]);
    const idle = present.filter((id) => id !== current && !queues.has(id)).sort((a, b) => (lastUsed.get(a) ?? 0) - (lastUsed.get(b) ?? 0));
    const busy = present.filter((id) => id !== current && queues.has(id)).length;
    const excess = idle.length + busy + 1 - max;
    for (const id of idle.slice(0, Math.max(0, excess))) {
      await fs.rm(path.join(workspacesDir, id), { recursive: true, force: true });
      lastUsed.delete(id);
      stateCache.delete(path.join(workspacesDir, id));
    }
  }

  return async (event) => {
    const parsed = runnerRequestSchema.safeParse(event);
    if (!parsed.success) {
      return { ok: false, error: { kind: 'bad_request', message: `Invalid runner request: ${parsed.error.message}` } };
    }
    const request = parsed.data;
    const key = request.workspace.id;
    const previous = queues.get(key) ?? Promise.resolve();
    const current = previous
      .catch(() => undefined)
      .then(async () => {
        // Only the runner's own user may enter its directories (commands run in namespaces).
        await fs.mkdir(workspacesDir, { recursive: true, mode: 0o700 });
        lastUsed.set(key, Date.now());
        await evict(key);
        return execute(deps, new LocalCopy(path.join(workspacesDir, key), deps.workspaceLimits ?? DEFAULT_WORKSPACE_LIMITS, stateCache, deps.snapshots), request);
      });
    queues.set(key, current);
    try {
      return await current;
    } finally {
      if (queues.get(key) === current) queues.delete(key);
    }
  };
}

async function execute(deps: RunnerDeps, local: LocalCopy, request: ParsedRunnerRequest): Promise<RunnerResponse> {
  const { workspace } = request;
  const remote = new RemoteWorkspace(deps.s3ForCredentials(workspace.credentials), workspace.bucket, workspace.id);
  const workspaceLimits = deps.workspaceLimits ?? DEFAULT_WORKSPACE_LIMITS;
  const tmpDir = path.join(local.dir, 'tmp');

  try {
    const sync = await local.materialize(remote, workspace.version);
    await fs.mkdir(tmpDir, { recursive: true });
    const ctx: OpContext = {
      request,
      paths: createPathMapper(local.tree),
      tmpDir,
      sandbox: deps.sandbox,
      limits: deps.limits,
      remote,
      local,
      workspaceLimits,
      git: { allowHttp: false, timeoutMs: 120_000, ...deps.git },
    };
    const definition = RUNNER_OPS[request.op.type] as RunnerOpDefinition;
    // Before anything may touch the tree, forget that it matches a version: a crash from here on
    // makes the next call rebuild instead of trusting the record.
    const base = definition.mutatesWorkspace ? await local.markDirty() : undefined;
    const outcome = await definition.run(ctx, request.op);
    const published = base ? await local.publish(remote, base) : { version: workspace.version, changedPaths: 0, bytesUploaded: 0 };
    return {
      ok: true,
      result: outcome.result as OpResult,
      cwd: outcome.cwd ?? request.cwd,
      version: published.version,
      changedFiles: published.changedPaths,
      bytesUploaded: published.bytesUploaded,
      sync,
    };
  } catch (err) {
    if (err instanceof ToolInputError) return { ok: false, error: { kind: 'tool_error', message: err.message } };
    if (err instanceof WorkspaceConflictError) return { ok: false, error: { kind: 'conflict', message: err.message } };
    if (err instanceof WorkspaceLimitError) return { ok: false, error: { kind: 'limit', message: err.message } };
    if (err instanceof WorkspaceMissingError) return { ok: false, error: { kind: 'bad_request', message: err.message } };
    throw err;
  }
}
