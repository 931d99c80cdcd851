import { promises as fs } from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { createCgroupLimiter, DEFAULT_PROCESS_LIMITS, type CgroupLimiter, type CommandCgroup, type ProcessLimits } from './cgroup-limits.ts';
import type { Sandbox, SandboxCommand, SandboxOutcome, SandboxSpec } from './sandbox.ts';
import { shellInvocation } from './shell-invocation.ts';
import { spawnWatched, type WatchedProcess } from './watched-process.ts';
import { CWD_FILE } from './sandbox-env.ts';
import type { StackEndpoints } from './stack-endpoints.ts';
import type { EgressMode } from '../common/egress-mode.ts';
import { createMailboxCas } from './command-mailbox.ts';
import { CWD_TRAP, envFlags, relayScript, sandboxArgs, writeIdentityFiles } from './bwrap-args.ts';
import { acquireHoldings, type CommandSetup, type SandboxProcess } from './bwrap-process.ts';
import { WarmPool } from './warm-pool.ts';
import { canHandOver, canStartAhead, startWarmBwrap, type WarmBwrap } from './warm-bwrap.ts';
import { warmKey } from './warm-key.ts';

/** How long a pre-started sandbox waits for its command before it is killed. */
const WARM_MAX_AGE_MS = 2 * 60_000;
/** Most pre-started sandboxes at once (one per workspace at most). */
const WARM_MAX_TOTAL = 4;

export interface BwrapSandboxOptions {
  runtimeDir: string;
  bwrapPath?: string;
  /** pids/memory caps per command, enforced with cgroup v1 where writable. @default DEFAULT_PROCESS_LIMITS */
  processLimits?: ProcessLimits;
  /** Refuse to run commands when the caps cannot be enforced (instead of running uncapped). @default false */
  requireProcessLimits?: boolean;
  /** The deployment's own services, which a command's proxy refuses whatever its allow-list says. @default none */
  stackEndpoints?: StackEndpoints;
  /**
   * Where a command's allowed requests go: `direct` (its own allow-list proxy, on the host's
   * network) or `mailbox` (through the workspace's S3 mailbox, as in AWS; mailbox-proxy.ts). @default direct
   */
  egress?: EgressMode;
  /** Where failures no caller waits for go (a pre-started sandbox that could not start). @default a JSON line on stderr */
  log?: (message: string, err: unknown) => void;
}

/**
 * Hardened bubblewrap. As root, plain bwrap is escapable (docs/local-stack.md); these flags close
 * that: a new user namespace mapping an unprivileged uid, no nested user namespaces, every
 * capability dropped, fresh pid/net/ipc/uts namespaces, and a root built from scratch: /usr
 * read-only, a few /etc files, the workspace at /workspace, a private /tmp, nothing else.
 * Killing bwrap kills the pid namespace, so no process outlives its call.
 *
 * A `warmAhead` command takes a sandbox pre-started for its workspace and settings when one is
 * ready (warm-bwrap.ts; docs/workspaces.md, "A sandbox started ahead"), and the next one starts
 * once it ends; each sandbox serves one command, then dies with it.
 */
export function createBwrapSandbox(opts: BwrapSandboxOptions): Sandbox {
  const log = opts.log ?? logToStderr;
  const setupFor = sandboxSetups(opts);
  const mailboxMode = opts.egress?.kind === 'mailbox';
  const pool = new WarmPool<WarmBwrap>({ maxTotal: WARM_MAX_TOTAL, maxAgeMs: WARM_MAX_AGE_MS, dispose: (w) => w.dispose(), onError: log });
  const warm = async (spec: SandboxSpec): Promise<boolean> => {
    const key = canStartAhead(spec, mailboxMode) ? await warmKey(spec) : undefined;
    if (key === undefined) return false;
    return pool.ensure(spec.workspaceDir, key, async () => {
      const setup = await setupFor();
      return startWarmBwrap(spec, setup, path.join(opts.runtimeDir, 'warm', `${setup.cgroupName}.out`));
    });
  };
  const take = async (cmd: SandboxCommand): Promise<WarmBwrap | undefined> => {
    const key = canStartAhead(cmd, mailboxMode) && canHandOver(cmd) ? await warmKey(cmd) : undefined;
    const ready = key === undefined ? undefined : await pool.take(cmd.workspaceDir, key);
    if (!ready) return undefined;
    if (ready.waiting() && (await ready.claim(cmd.outputFile))) return ready;
    await ready.dispose().catch((err: unknown) => log('could not end a pre-started sandbox', err));
    return undefined;
  };
  return {
    name: 'bwrap',
    async run(cmd: SandboxCommand): Promise<SandboxOutcome> {
      if (!cmd.warmAhead) return runCommand(cmd, await setupFor());
      const outcome = await runCommand(cmd, await setupFor(), await take(cmd));
      // The next command's sandbox starts now, while the runner publishes and the model thinks.
      warm(cmd).catch((err: unknown) => log('could not start a sandbox ahead', err));
      return outcome;
    },
    warm,
    discardWarm: (dir) => pool.discardWhere((workspaceDir) => workspaceDir === dir || workspaceDir.startsWith(`${dir}${path.sep}`)),
  };
}

/** Each call: the next sandbox's setup (its own cgroup and proxy socket names), the shared parts prepared once. */
function sandboxSetups(opts: BwrapSandboxOptions): () => Promise<CommandSetup> {
  const bwrap = opts.bwrapPath ?? 'bwrap';
  const processLimits = opts.processLimits ?? DEFAULT_PROCESS_LIMITS;
  const etcDir = path.join(opts.runtimeDir, 'sandbox-etc');
  let etcReady: Promise<void> | undefined;
  let limiterReady: Promise<CgroupLimiter | undefined> | undefined;
  let counter = 0;
  const caFor = createMailboxCas();
  const instance = randomBytes(4).toString('hex');
  return async () => {
    etcReady ??= writeIdentityFiles(etcDir);
    await etcReady;
    limiterReady ??= createCgroupLimiter(processLimits);
    const limiter = await limiterReady;
    if (!limiter && opts.requireProcessLimits) {
      throw new Error('cgroup v1 pids/memory controllers are not writable here; refusing to run commands without process and memory limits.');
    }
    const id = ++counter;
    return {
      bwrap,
      etcDir,
      processLimits,
      proxySocket: path.join(opts.runtimeDir, 'proxy', `${id}.sock`),
      stackEndpoints: opts.stackEndpoints,
      mailboxCas: opts.egress?.kind === 'mailbox' ? caFor : undefined,
      limiter,
      cgroupName: `${instance}-${process.pid}-${id}`,
    };
  };
}

function logToStderr(message: string, err: unknown): void {
  process.stderr.write(`${JSON.stringify({ level: 'error', msg: message, error: String(err) })}\n`);
}

/** Runs one command in `warm` (pre-started for it) or in a sandbox started for it now. */
async function runCommand(cmd: SandboxCommand, setup: CommandSetup, warm?: WarmBwrap): Promise<SandboxOutcome> {
  await fs.mkdir(path.join(cmd.tmpDir, 'home'), { recursive: true });
  await fs.rm(path.join(cmd.tmpDir, CWD_FILE), { force: true });
  const sandbox = warm ?? (await coldProcess(cmd, setup));
  let outcome: SandboxOutcome;
  try {
    outcome = await runInSandbox(sandbox, cmd, () => limitsHit(sandbox.cgroup, setup.processLimits));
  } catch (err) {
    await sandbox.release();
    throw err;
  }
  // A command left running in the background keeps its cgroup and proxy until it ends.
  if (outcome.detached) return { ...outcome, detached: { ...outcome.detached, done: outcome.detached.done.finally(() => sandbox.release()) } };
  await sandbox.release();
  return outcome;
}

/** A sandbox started for `cmd` now: its cwd and its shell on bwrap's command line. */
async function coldProcess(cmd: SandboxCommand, setup: CommandSetup): Promise<SandboxProcess> {
  const holdings = await acquireHoldings(setup, cmd);
  const { mounts, vars } = sandboxArgs(cmd, setup.etcDir, holdings.network);
  const shell = ['/bin/bash', ...shellInvocation(`${CWD_TRAP}${relayScript(holdings.network.proxySocket)}`, cmd.command)];
  const [file, argv] = holdings.command([...mounts, '--chdir', cmd.cwd, ...envFlags(vars), ...shell]);
  return {
    cgroup: holdings.cgroup,
    // cwd '/' so not even the runner's own directory leaks into the sandbox's init (/proc/1/environ PWD).
    launch: (_cmd, watch) => spawnWatched(file, argv, { env: {}, cwd: '/', ...watch }),
    release: () => holdings.release(),
  };
}

async function limitsHit(cgroup: CommandCgroup | undefined, processLimits: ProcessLimits): Promise<SandboxOutcome['limitHit']> {
  const hit = await cgroup?.limitHit();
  return hit ? { kind: hit, limit: hit === 'memory' ? processLimits.maxMemoryBytes : processLimits.maxProcesses } : undefined;
}

async function runInSandbox(sandbox: SandboxProcess, cmd: SandboxCommand, limitHitOf: () => Promise<SandboxOutcome['limitHit']>): Promise<SandboxOutcome> {
  const started = Date.now();
  // A command that may move to the background is never killed for time: it detaches instead.
  const child: WatchedProcess = sandbox.launch(cmd, {
    outputFile: cmd.outputFile,
    maxOutputBytes: cmd.maxOutputBytes,
    timeoutMs: cmd.detachAfterMs === undefined ? cmd.timeoutMs : undefined,
    stop: cmd.stop,
  });
  const finished = child.finished.then(async ({ code, signal, timedOut, outputLimitHit, interrupted }): Promise<SandboxOutcome> => {
    const durationMs = Date.now() - started;
    // Whatever the shell left running (a `&` job, a daemon) dies with its call.
    child.kill();
    const limitHit = await limitHitOf();
    const finalCwd = await fs.readFile(path.join(cmd.tmpDir, CWD_FILE), 'utf8').then(
      (s) => s.trim() || undefined,
      () => undefined,
    );
    return {
      exitCode: code,
      signal,
      timedOut,
      outputLimitHit,
      finalCwd,
      durationMs,
      ...(limitHit ? { limitHit } : {}),
      ...(interrupted ? { interrupted } : {}),
    };
  });
  if (cmd.detachAfterMs === undefined) return finished;
  return detachAfter(cmd.detachAfterMs, finished, () => ({ done: finished, pid: child.pid! }), started);
}

/**
 * Still running after `ms`: leave the command running as a background task (only the output
 * cap still applies) and answer now.
 */
function detachAfter(
  ms: number,
  finished: Promise<SandboxOutcome>,
  detached: () => NonNullable<SandboxOutcome['detached']>,
  started: number,
): Promise<SandboxOutcome> {
  let detachTimer: NodeJS.Timeout | undefined;
  const early = new Promise<SandboxOutcome>((resolve) => {
    detachTimer = setTimeout(() => {
      resolve({ exitCode: null, signal: null, timedOut: false, outputLimitHit: false, durationMs: Date.now() - started, detached: detached() });
    }, ms);
  });
  return Promise.race([finished.finally(() => clearTimeout(detachTimer)), early]);
}
