import { z } from 'zod';
import { runnerOpSchema, type OpResult } from './ops/index.ts';
export { runnerOpSchema };
/** Every op's input and result types (ops/index.ts lists them). */
export type * from './ops/index.ts';

/**
 * The wire contract between the harness and the runner (the Lambda Invoke payload), the one
 * copy both sides import: the runner parses requests with these schemas, the harness builds
 * them (functions/runner-client/workspace-client.ts) with these types, importing types only so
 * its bundle does not load the runner's ops. Besides this file the harness imports only
 * common/, the helpers both sides need (the model's view of paths, file keys, the allow-list
 * parser, workspace limits, ...), which imports neither side (dependency-rules.json). The runner
 * is a stateless executor: everything it needs arrives in the request, everything it changed
 * goes back in the response.
 */

import { VIRTUAL_ROOT } from './common/virtual-paths.ts';
import { allowListSchema } from './common/network-allow-list.ts';
import { ENVIRONMENT_LAYER_KEY } from './common/environment-layer-key.ts';

const credentialsSchema = z.object({
  accessKeyId: z.string(),
  secretAccessKey: z.string(),
  sessionToken: z.string().optional(),
  expiration: z.string().optional(),
});

export const workspaceTargetSchema = z.object({
  bucket: z.string().min(1),
  /** The workspace id; its objects live under `workspaces/{id}/`. */
  id: z.string().regex(/^[A-Za-z0-9_-]{1,128}$/),
  version: z.number().int().nonnegative(),
  /** Short-lived credentials scoped to this workspace's prefix (never the runner's own role). */
  credentials: credentialsSchema,
});

/**
 * The session's cached environment (docs/workspaces.md, "The cached environment"): the layer's
 * key, credentials that reach that one object (read; read and write for `environment_save`), and
 * the most bytes it may hold. With it, the runner restores the layer beside the workspace when
 * its copy lacks it, and new dependency directories belong to the layer, not the workspace.
 */
export const environmentLayerSchema = z.object({
  key: z.string().regex(ENVIRONMENT_LAYER_KEY),
  credentials: credentialsSchema,
  maxBytes: z.number().int().positive(),
});

export const runnerRequestSchema = z.object({
  sessionId: z.string(),
  workspace: workspaceTargetSchema,
  /** The Bash cwd as the model sees it. */
  cwd: z.string().default(VIRTUAL_ROOT),
  /** Session variables for commands; merged into a scrubbed environment. */
  env: z.record(z.string(), z.string()).default({}),
  /**
   * The session's network policy: hosts commands may reach over HTTP(S) (common/network-allow-list.ts);
   * none by default. `egressToken` is the harness's signature of that list for the AWS egress
   * proxy (common/egress-token.ts); the local sandbox enforces the list itself and needs none.
   * `phase` says whose list it is (the set-up steps' or the agent's), for the egress grant the
   * harness writes in the mailbox mode (functions/runner-client/egress-grants.ts); the runner ignores it.
   */
  network: z
    .object({ allowedDomains: allowListSchema, egressToken: z.string().max(16_384).optional(), phase: z.enum(['setup', 'agent']).optional() })
    .default({ allowedDomains: [] }),
  environment: environmentLayerSchema.optional(),
  op: runnerOpSchema,
});

export type RunnerRequest = z.input<typeof runnerRequestSchema>;
export type ParsedRunnerRequest = z.output<typeof runnerRequestSchema>;
export type StorageCredentials = z.infer<typeof credentialsSchema>;

export type RunnerErrorKind =
  /** The operation's input was wrong in a way the model can fix (missing file, path outside). */
  | 'tool_error'
  /** The workspace changed under us (a stale version): nothing was saved; move to `latestVersion`. */
  | 'conflict'
  /** A workspace limit was hit (size, file count). */
  | 'limit'
  /** The request itself was malformed (harness bug). */
  | 'bad_request';

export interface RunnerSuccess {
  ok: true;
  result: OpResult;
  cwd: string;
  /** The workspace version after the op (unchanged when nothing changed). */
  version: number;
  changedFiles: number;
  bytesUploaded: number;
  /** How the local copy reached the requested version: already there, by deltas, from a snapshot, or not at all (an op that needs no copy). */
  sync: { mode: 'warm' | 'incremental' | 'cold' | 'none'; changedPaths: number };
  /** Where the call's time went inside the runner (ms): bringing the copy to the version, the op, publishing its change. */
  timings?: RunnerTimings;
}

export interface RunnerTimings {
  syncMs: number;
  opMs: number;
  publishMs: number;
}

export interface RunnerFailure {
  ok: false;
  error: {
    kind: RunnerErrorKind;
    message: string;
    /** With `conflict`: the workspace's newest version, which the caller should move to. */
    latestVersion?: number;
  };
}

export type RunnerResponse = RunnerSuccess | RunnerFailure;
