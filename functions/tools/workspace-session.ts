import path from 'node:path';
import type { FileStateEntry, OpResult, RunnerOp } from '../../sandbox-runner/protocol.ts';
import type { RunnerClient, WorkspaceCredentialSource } from '../runner-client/runner-client.ts';
import type { WorkspaceRef } from '../stores/session-store.ts';
import { ToolError } from './tool.ts';

/** Files remembered per session; the oldest are forgotten first (they would need a fresh Read anyway). */
export const MAX_FILE_STATE_ENTRIES = 200;

/**
 * One session's workspace as tools use it: every operation goes to the runner with the current
 * version and cwd, and the version and cwd the runner reports become current. The turn engine
 * persists them after each call, so the next turn (on any instance) starts where this one ended.
 * The read-file state travels the same way: Read records what the model saw, Write and Edit
 * check it in the runner and record what they wrote.
 */
export class WorkspaceSession {
  constructor(
    private readonly deps: { runner: RunnerClient; credentials: WorkspaceCredentialSource; bucket: string },
    readonly sessionId: string,
    private ref: WorkspaceRef,
    private currentCwd: string,
    private readonly env: Record<string, string> = {},
    fileState: Record<string, FileStateEntry> = {},
    /** Hosts the session's commands may reach over HTTP(S); none when empty. */
    private readonly allowedDomains: readonly string[] = [],
  ) {
    this.files = new Map(Object.entries(fileState));
  }

  private readonly files: Map<string, FileStateEntry>;

  /** The read-file state as stored in the session record. */
  get fileState(): Record<string, FileStateEntry> {
    return Object.fromEntries(this.files);
  }

  /** The absolute virtual path a tool's path argument names (relative ones start at the cwd). */
  resolvePath(filePath: string): string {
    return path.posix.resolve(this.currentCwd, filePath);
  }

  getFileState(filePath: string): FileStateEntry | undefined {
    return this.files.get(this.resolvePath(filePath));
  }

  setFileState(virtualPath: string, entry: FileStateEntry): void {
    this.files.delete(virtualPath);
    // Stored as DynamoDB attributes: no undefined members.
    this.files.set(virtualPath, JSON.parse(JSON.stringify(entry)) as FileStateEntry);
    while (this.files.size > MAX_FILE_STATE_ENTRIES) this.files.delete(this.files.keys().next().value!);
  }

  get version(): number {
    return this.ref.version;
  }

  get workspace(): WorkspaceRef {
    return { ...this.ref };
  }

  get cwd(): string {
    return this.currentCwd;
  }

  setCwd(cwd: string): void {
    this.currentCwd = cwd;
  }

  async run<T extends OpResult['type']>(op: RunnerOp & { type: T }): Promise<Extract<OpResult, { type: T }>> {
    const credentials = await this.deps.credentials.forWorkspace(this.ref.id);
    const response = await this.deps.runner.invoke({
      sessionId: this.sessionId,
      workspace: { bucket: this.deps.bucket, id: this.ref.id, version: this.ref.version, credentials },
      cwd: this.currentCwd,
      env: this.env,
      ...(this.allowedDomains.length > 0 ? { network: { allowedDomains: [...this.allowedDomains] } } : {}),
      op,
    });
    if (!response.ok) {
      // bad_request is a harness bug; the rest are conditions the model can be told about.
      if (response.error.kind === 'bad_request') throw new Error(response.error.message);
      // Someone else published meanwhile and this change was dropped: move to their version, so
      // the next call reloads it instead of conflicting with it forever.
      if (response.error.kind === 'conflict' && response.error.latestVersion !== undefined) {
        this.ref = { ...this.ref, version: Math.max(this.ref.version, response.error.latestVersion) };
      }
      throw new ToolError(response.error.message);
    }
    this.ref = { ...this.ref, version: response.version };
    this.currentCwd = response.cwd;
    return response.result as Extract<OpResult, { type: T }>;
  }
}
