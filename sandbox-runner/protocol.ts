import { z } from 'zod';

/**
 * The wire contract between the harness and the runner (the Lambda Invoke payload). The runner
 * is a stateless executor: everything it needs arrives in the request, everything it changed
 * goes back in the response.
 */

export const VIRTUAL_ROOT = '/workspace';

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

const bashOp = z.object({
  type: z.literal('bash'),
  command: z.string(),
  timeoutMs: z.number().int().positive(),
});

const readOp = z.object({
  type: z.literal('read'),
  /** Absolute virtual path (under /workspace). */
  path: z.string(),
});

const fileContent = z.union([z.string(), z.object({ base64: z.string() })]);

const createWorkspaceOp = z.object({
  type: z.literal('create_workspace'),
  /** Relative paths → UTF-8 text or `{ base64 }`. */
  files: z.record(z.string(), fileContent),
});

export const runnerOpSchema = z.discriminatedUnion('type', [bashOp, readOp, createWorkspaceOp]);

export const runnerRequestSchema = z.object({
  sessionId: z.string(),
  workspace: workspaceTargetSchema,
  /** The Bash cwd as the model sees it. */
  cwd: z.string().default(VIRTUAL_ROOT),
  /** Session variables for commands; merged into a scrubbed environment. */
  env: z.record(z.string(), z.string()).default({}),
  op: runnerOpSchema,
});

export type RunnerRequest = z.input<typeof runnerRequestSchema>;
export type ParsedRunnerRequest = z.output<typeof runnerRequestSchema>;
export type RunnerOp = z.infer<typeof runnerOpSchema>;
export type WorkspaceTarget = z.infer<typeof workspaceTargetSchema>;
export type StorageCredentials = z.infer<typeof credentialsSchema>;

export interface BashResult {
  type: 'bash';
  /** stdout and stderr merged in the order they were written. */
  output: string;
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  /** Set when output passed the runner's cap and was cut. */
  outputTruncated: boolean;
  durationMs: number;
}

export interface ReadResult {
  type: 'read';
  /** Virtual path of the file. */
  path: string;
  content: string;
  sizeBytes: number;
  mtimeMs: number;
}

export interface CreateWorkspaceResult {
  type: 'create_workspace';
  fileCount: number;
  totalBytes: number;
}

export type OpResult = BashResult | ReadResult | CreateWorkspaceResult;

export type RunnerErrorKind =
  /** The operation's input was wrong in a way the model can fix (missing file, path outside). */
  | 'tool_error'
  /** The workspace changed under us (a stale version); retry from the newer version. */
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
}

export interface RunnerFailure {
  ok: false;
  error: { kind: RunnerErrorKind; message: string };
}

export type RunnerResponse = RunnerSuccess | RunnerFailure;
