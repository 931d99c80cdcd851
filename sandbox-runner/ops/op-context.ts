import type { EgressMode } from '../common/egress-mode.ts';
import type { Sandbox } from '../isolation/sandbox.ts';
import type { StackEndpoints } from '../isolation/stack-endpoints.ts';
import type { PathMapper } from '../common/virtual-paths.ts';
import type { WorkspaceLimits } from '../common/workspace-limits.ts';
import type { ArchiveLimits } from '../workspace/archive-guards.ts';
import type { LocalCopy } from '../workspace/local-copy.ts';
import type { RemoteWorkspace } from '../workspace/remote-workspace.ts';

/**
 * What ops read of the runner request (protocol.ts builds the request schema from the ops, so
 * the ops name only these fields and never import it; the parsed request satisfies this).
 */
export interface OpRequest {
  /** The Bash cwd as the model sees it. */
  cwd: string;
  /** Session variables for commands. */
  env: Record<string, string>;
  network: { allowedDomains: string[]; egressToken?: string };
  workspace: { version: number };
}

/** What an operation gets: the materialised workspace and the means to run in it. */
export interface OpContext {
  request: OpRequest;
  paths: PathMapper;
  /** Per-workspace scratch directory, mounted at /tmp for commands. */
  tmpDir: string;
  sandbox: Sandbox;
  limits: RunnerLimits;
  /** The workspace's S3 side (scoped to its prefix), for imports and exports. */
  remote: RemoteWorkspace;
  /** The warm copy, for ops that read its recorded entries. */
  local: LocalCopy;
  workspaceLimits: WorkspaceLimits;
  archiveLimits: ArchiveLimits;
  git: GitImportOptions;
  /** Keeps this workspace's copy from eviction until `until` settles (a background command uses it). */
  retain(until: Promise<unknown>): void;
}

export interface GitImportOptions {
  /** Accept plain http:// remotes (a git server on a private network). */
  allowHttp: boolean;
  timeoutMs: number;
  /** How clones reach the remote; always through an allow-list proxy naming only the clone URL's host:port. @default direct */
  egress?: EgressMode;
  /** The deployment's own services, which the clone's proxy refuses like a command's does. @default none (NO_STACK_ENDPOINTS) */
  stackEndpoints: StackEndpoints;
}

export interface RunnerLimits {
  /** Bytes of merged output a command may produce before it is killed. */
  maxOutputBytes: number;
  /** Largest file Read will load into memory. */
  maxReadBytes: number;
}

/** Ops raise it from here; it lives at the runner's bottom layer, which the sandboxes raise it from too. */
