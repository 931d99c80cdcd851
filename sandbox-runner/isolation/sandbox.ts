import type { MailboxTarget } from './mailbox-client.ts';

/**
 * How the runner executes one shell command in isolation. The bwrap implementation is used
 * wherever Linux namespaces are available (locally, CI); inside AWS Lambda, where they are not,
 * the runner relies on the function's own isolation (one workspace per container, scoped
 * credentials, no secrets in the environment).
 */
export interface SandboxCommand {
  /** The script, passed to a fresh `bash -c`. */
  command: string;
  /** Real directory mounted at /workspace. */
  workspaceDir: string;
  /** Real directory mounted at /tmp (per workspace, wiped with it). */
  tmpDir: string;
  /** Working directory inside the sandbox (a /workspace path). */
  cwd: string;
  /** Extra variables (the session's own); the base environment is built from scratch. */
  env: Record<string, string>;
  timeoutMs: number;
  /** File (outside the sandbox) receiving stdout and stderr merged in time order. */
  outputFile: string;
  /** The command is killed when its output passes this many bytes. */
  maxOutputBytes: number;
  /** Hosts the command may reach over HTTP(S) through the sandbox's proxy; none when empty. */
  allowedDomains?: string[];
  /** The harness's signature of allowedDomains, for an external egress proxy (egress-mode.ts `proxy`). */
  egressToken?: string;
  /** The workspace's S3 mailbox, through which allowed requests leave in the `mailbox` egress mode (mailbox-client.ts). */
  mailbox?: MailboxTarget;
  /**
   * When set, a command still running after this many ms is not killed but left running in the
   * background: run() resolves at once with `detached`, and timeoutMs no longer applies.
   */
  detachAfterMs?: number;
  /** Aborted when the harness asks to stop the command (its turn was interrupted): the command is killed. */
  stop?: AbortSignal;
  /**
   * Serve the command from a pre-started sandbox of the same workspace and settings when one is
   * ready, and pre-start the next one once it ends (Bash does; a hook's command, whose variables
   * differ, leaves them alone). Where a sandbox cannot be pre-started it runs as without.
   */
  warmAhead?: boolean;
}

/** What a sandbox's start depends on besides the command: the workspace, its /tmp, variables and network. */
export type SandboxSpec = Pick<SandboxCommand, 'workspaceDir' | 'tmpDir' | 'env' | 'allowedDomains' | 'egressToken' | 'mailbox'>;

export interface SandboxOutcome {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  outputLimitHit: boolean;
  /** Killed because `stop` aborted. */
  interrupted?: boolean;
  /** The shell's working directory when it exited, if it could be read. */
  finalCwd?: string;
  durationMs: number;
  /** A process or memory cap the command ran into (it may have been killed for it). */
  limitHit?: { kind: 'memory' | 'processes'; limit: number };
  /** Present when the command was left running (see detachAfterMs). */
  detached?: { done: Promise<SandboxOutcome>; pid: number };
}

export interface Sandbox {
  readonly name: string;
  run(cmd: SandboxCommand): Promise<SandboxOutcome>;
  /**
   * Pre-starts a sandbox for the next `warmAhead` command of this spec, in the background (the
   * promise settles once it is started, or is found already there); answers whether there is one.
   * Absent where there is nothing to start ahead (the process sandbox).
   */
  warm?(spec: SandboxSpec): Promise<boolean>;
  /** Kills the pre-started sandboxes of workspaces under `dir` (their copy is being removed). */
  discardWarm?(dir: string): Promise<void>;
}
