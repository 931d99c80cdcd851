import path from 'node:path';
import type { FileStateEntry, OpResult, RunnerOp } from '../../sandbox-runner/protocol.ts';
import { WorkspaceConflictError } from './runner-errors.ts';
import { RUNNER_SLOT_WAIT_IN_RUN_MS } from './runner-slot.ts';
import { runOp, type OpTarget, type ResultOf, type StorageMeter, type WorkspaceClientDeps } from './workspace-client.ts';

/** Files remembered per session; the oldest are forgotten first (they would need a fresh Read anyway). */
export const MAX_FILE_STATE_ENTRIES = 200;

export interface WorkspaceSessionOptions {
  deps: WorkspaceClientDeps;
  sessionId: string;
  /** The workspace and the version the first op starts from. */
  workspace: { id: string; version: number };
  cwd: string;
  /** Session variables for commands. */
  env?: Record<string, string>;
  /** The read-file state as stored in the session record. */
  fileState?: Record<string, FileStateEntry>;
  /** Hosts the session's commands may reach over HTTP(S); none when absent or empty. */
  allowedDomains?: readonly string[];
  /**
   * Puts a running command's stop marker (`stops/{key}` under the workspace's prefix, which the
   * runner watches: sandbox-runner/ops/bash-op.ts). Without it, commands cannot be stopped.
   */
  requestStop?: (workspaceId: string, key: string) => Promise<void>;
  /** The session's tenant and its storage counter (workspace-client.ts). */
  storage?: StorageMeter;
  /** Subdirectory instructions files the session already has (as stored in the session record). */
  attachedInstructions?: string[];
  /** The session's cached environment layer, named on every call (workspace-client.ts). */
  environment?: { key: string };
}

/** How Reads look for the instructions files of the directories above what they read (the read op's `instructions`). */
export interface InstructionsLookup {
  names: string[];
  limits: { maxFileChars: number; maxDepth: number };
  /** Files this turn already carries in its instructions block: never attached again. */
  loaded: readonly string[];
}

/** Most subdirectory instructions files remembered per session (more than any repository has). */
const MAX_ATTACHED_INSTRUCTIONS = 500;

/** A command that may be stopped: when `signal` aborts while it runs, its marker `key` is put. */
export interface StoppableRun {
  signal: AbortSignal;
  key: string;
}

/**
 * One session's workspace as tools use it: every operation goes to the runner with the current
 * version and cwd, and the version and cwd the runner reports become current. The turn engine
 * persists them after each call, so the next turn (on any instance) starts where this one ended.
 * The read-file state travels the same way: Read records what the model saw, Write and Edit
 * check it in the runner and record what they wrote.
 */
export class WorkspaceSession {
  readonly sessionId: string;
  private readonly deps: WorkspaceClientDeps;
  private ref: { id: string; version: number };
  private currentCwd: string;
  private readonly sessionEnv: Record<string, string>;
  private env: Record<string, string>;
  private readonly allowedDomains: readonly string[];
  private readonly files: Map<string, FileStateEntry>;
  private readonly requestStop: WorkspaceSessionOptions['requestStop'];
  private readonly storage: StorageMeter | undefined;
  private readonly attached: Set<string>;
  /** Set by the turn when Reads should bring subdirectory instructions along; absent: they do not. */
  instructionsLookup: InstructionsLookup | undefined;
  /** The session's environment section (set by the turn when it is first taken), stored with the session. */
  environmentSection: string | undefined;
  private layer: { key: string } | undefined;
  /** The warm call in flight, if any (it never rejects). */
  private warming: Promise<void> | undefined;

  constructor(opts: WorkspaceSessionOptions) {
    this.deps = opts.deps;
    this.sessionId = opts.sessionId;
    this.ref = { ...opts.workspace };
    this.currentCwd = opts.cwd;
    this.sessionEnv = opts.env ?? {};
    this.env = this.sessionEnv;
    this.allowedDomains = opts.allowedDomains ?? [];
    this.files = new Map(Object.entries(opts.fileState ?? {}));
    this.requestStop = opts.requestStop;
    this.storage = opts.storage;
    this.attached = new Set(opts.attachedInstructions ?? []);
    this.layer = opts.environment ? { key: opts.environment.key } : undefined;
  }

  /** Subdirectory instructions files attached so far, in the order they were (stored with the session). */
  get attachedInstructions(): string[] {
    return [...this.attached];
  }

  /** What a Read should ask the runner for, or undefined when Reads bring no instructions. */
  nestedInstructionsRequest(): { names: string[]; skip: string[]; limits: InstructionsLookup['limits'] } | undefined {
    const lookup = this.instructionsLookup;
    if (!lookup || this.attached.size >= MAX_ATTACHED_INSTRUCTIONS) return undefined;
    return { names: lookup.names, skip: [...lookup.loaded, ...this.attached], limits: lookup.limits };
  }

  /**
   * Records files a Read brought as attached and returns those no other call attached first
   * (two Reads in one batch ask the runner with the same skip list; only the first to finish
   * attaches a file they share).
   */
  claimInstructions<T extends { path: string }>(files: readonly T[]): T[] {
    const fresh = files.filter((f) => !this.attached.has(f.path));
    for (const f of fresh) this.attached.add(f.path);
    return fresh;
  }

  /** Names a cached environment layer on every later call (the set-up's, once its fingerprint is known). */
  useEnvironment(environment: { key: string }): void {
    this.layer = { key: environment.key };
  }

  /** The cached environment layer the session's calls name, if any. */
  get environment(): { key: string } | undefined {
    return this.layer ? { ...this.layer } : undefined;
  }

  /**
   * Variables for the sandboxed commands of later ops (Bash, command hooks): the session's own
   * and, from each run's start, its repository's `.claude/settings.json` `env` under them (the
   * session's win). They go only into runner requests; the harness's own environment never sees them.
   */
  setCommandEnv(repositoryEnv: Record<string, string>): void {
    this.env = { ...repositoryEnv, ...this.sessionEnv };
  }

  /** Whether `run` can stop a running command (the op then carries `stopKey`). */
  get canStop(): boolean {
    return this.requestStop !== undefined;
  }

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

  get workspace(): { id: string; version: number } {
    return { ...this.ref };
  }

  get cwd(): string {
    return this.currentCwd;
  }

  setCwd(cwd: string): void {
    this.currentCwd = cwd;
  }

  /**
   * Runs an op at the current version and cwd. A refusal is thrown as the typed error
   * runner-errors.ts decodes (the tool pipeline gives its message to the model). `network`
   * replaces the session's allow-list for this one op: set-up steps reach the registries, which
   * the agent's own commands never do (functions/environments/setup-steps.ts).
   */
  async run<T extends OpResult['type']>(
    op: RunnerOp & { type: T },
    stoppable?: StoppableRun,
    network?: { allowedDomains: readonly string[]; phase?: 'setup' | 'agent' },
  ): Promise<ResultOf<T>> {
    // A warm still on its way goes first, as the runner would queue it anyway: it names the
    // version this op starts from, so it must never reach the runner after the op's new one.
    await this.warming;
    const target = { ...this.target(network), waitForRunnerSlotMs: RUNNER_SLOT_WAIT_IN_RUN_MS };
    const stop = stoppable && this.requestStop ? this.watchStop(stoppable, this.requestStop) : undefined;
    try {
      const outcome = await runOp<T>(this.deps, target, op);
      this.ref = { ...this.ref, version: outcome.version };
      this.currentCwd = outcome.cwd;
      return outcome.result;
    } catch (err) {
      // Someone else published meanwhile and this change was dropped: move to their version, so
      // the next call reloads it instead of conflicting with it forever.
      if (err instanceof WorkspaceConflictError && err.latestVersion !== undefined) {
        this.ref = { ...this.ref, version: Math.max(this.ref.version, err.latestVersion) };
      }
      throw err;
    } finally {
      stop?.();
    }
  }

  /**
   * Asks the runner to get ready for a Bash command while the turn waits for the model: the copy
   * brought to the current version and a sandbox started ahead with the session's variables and
   * network (sandbox-runner/ops/warm-op.ts). It changes nothing here and never fails: a warm that
   * did not happen only leaves the first command to start its own sandbox, so failures are logged.
   * It does not wait for a runner slot: with every slot busy there is nothing to gain.
   */
  warm(): Promise<void> {
    const done = runOp(this.deps, this.target(), { type: 'warm' }).then(
      () => undefined,
      (err: unknown) => this.deps.log.warn('could not get the runner ready for Bash; the first command starts its own sandbox', { error: String(err) }),
    );
    this.warming = done;
    return done;
  }

  /** Which workspace an op runs on, as whom, and with what the session's commands get. */
  private target(network?: { allowedDomains: readonly string[]; phase?: 'setup' | 'agent' }): OpTarget {
    return {
      sessionId: this.sessionId,
      workspace: this.ref,
      cwd: this.currentCwd,
      env: this.env,
      allowedDomains: network?.allowedDomains ?? this.allowedDomains,
      ...(network?.phase ? { networkPhase: network.phase } : {}),
      storage: this.storage,
      ...(this.layer ? { environment: this.layer } : {}),
    };
  }

  /** Puts the stop marker when the signal aborts while the op runs; returns the unsubscribe. */
  private watchStop(stoppable: StoppableRun, requestStop: NonNullable<WorkspaceSessionOptions['requestStop']>): () => void {
    const workspaceId = this.ref.id;
    const onAbort = () => {
      requestStop(workspaceId, stoppable.key).catch((err: unknown) => {
        this.deps.log.warn('could not ask the runner to stop a command; it runs to its end', { key: stoppable.key, error: String(err) });
      });
    };
    if (stoppable.signal.aborted) onAbort();
    else stoppable.signal.addEventListener('abort', onAbort, { once: true });
    return () => stoppable.signal.removeEventListener('abort', onAbort);
  }
}
