import type { ChildProcess } from 'node:child_process';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { SandboxCommand, SandboxSpec } from './sandbox.ts';
import { CWD_TRAP, relayScript, sandboxArgs } from './bwrap-args.ts';
import { acquireHoldings, type CommandSetup, type SandboxHoldings, type SandboxProcess } from './bwrap-process.ts';
import { shellInvocation } from './shell-invocation.ts';
import { killGroup, spawnInGroup, watchProcess } from './watched-process.ts';

/** A sandbox started ahead of its command, waiting on a pipe for it. */
export interface WarmBwrap extends SandboxProcess {
  /** Whether it still waits (it neither exited nor failed to start). */
  waiting(): boolean;
  /** Moves its output file to the command's; false when that cannot be done (then it is disposed of). */
  claim(outputFile: string): Promise<boolean>;
  /** Kills it unused and releases what it holds. */
  dispose(): Promise<void>;
}

/** Variable names the stub passes on exactly (through env(1)); a command with any other name starts cold. */
const PLAIN_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Whether commands of this spec can be served by a pre-started sandbox. */
export function canStartAhead(spec: SandboxSpec, mailboxMode: boolean): boolean {
  // In the mailbox mode the proxy holds the request's own credentials: it is started per command.
  if (mailboxMode && spec.allowedDomains?.length) return false;
  return Object.keys(spec.env).every((name) => PLAIN_NAME.test(name));
}

/** Whether this command can be handed over through the pipe (a NUL cannot; such a command fails cold as it always did). */
export function canHandOver(cmd: SandboxCommand): boolean {
  return !cmd.command.includes('\0') && !cmd.cwd.includes('\0');
}

/**
 * Starts a sandbox exactly as a cold command's (the same flags from sandboxArgs, the same
 * cgroup limits, the same proxy) but with the stub below in place of the command's shell.
 * `outputFile` is its stdout and stderr until `claim` renames it to the command's output file.
 */
export async function startWarmBwrap(spec: SandboxSpec, setup: CommandSetup, outputFile: string): Promise<WarmBwrap> {
  const holdings = await acquireHoldings(setup, spec);
  let child: ChildProcess;
  try {
    const { mounts, vars } = sandboxArgs(spec, setup.etcDir, holdings.network);
    const [file, argv] = holdings.command([...mounts, '--clearenv', '/bin/bash', '-c', handOverStub(vars, holdings.network.proxySocket)]);
    await fs.mkdir(path.dirname(outputFile), { recursive: true });
    child = spawnInGroup(file, argv, { env: {}, cwd: '/', outputFile, stdin: 'pipe' });
  } catch (err) {
    await holdings.release();
    throw err;
  }
  return warmHandle(child, holdings, outputFile);
}

/**
 * The stub the sandbox runs until its command arrives. It starts with an empty environment, so
 * nothing of the session's variables (BASH_ENV, SHELLOPTS, exported functions) acts on it; it
 * starts the proxy relay, blocks reading `cwd NUL length NUL script` from stdin (in the C locale
 * of an empty environment, read -N counts bytes), puts /dev/null on stdin, moves to the cwd and
 * execs, through `env -i` with exactly the variables a cold command gets, the very shell
 * invocation a cold command runs (shell-invocation.ts): same $0, same line numbers, same pid 2.
 */
function handOverStub(vars: Record<string, string>, proxySocket: string | undefined): string {
  const assignments = Object.entries(vars).map(([k, v]) => quote(`${k}=${v}`));
  const [flag, script, zero] = shellInvocation(CWD_TRAP, '');
  return [
    relayScript(proxySocket).trimEnd(),
    // read -N takes the script in large reads, without forking (a child would take a pid the command sees).
    `IFS= read -r -d '' c && IFS= read -r -d '' n && IFS= read -r -N "$n" s || exit 1`,
    'exec </dev/null',
    'cd -P -- "$c" || exit 1',
    `exec /usr/bin/env -i -- ${assignments.join(' ')} /bin/bash ${flag} ${quote(script!)} ${quote(zero!)} "$s"`,
  ]
    .filter(Boolean)
    .join('\n');
}

function quote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

function warmHandle(child: ChildProcess, holdings: SandboxHoldings, outputFile: string): WarmBwrap {
  let ended = false;
  const gone = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', () => resolve());
  }).then(() => {
    ended = true;
  });
  // A write to a stub that died meanwhile fails with EPIPE; its exit tells the command's outcome.
  child.stdin?.on('error', () => undefined);
  let claimed = false;
  return {
    cgroup: holdings.cgroup,
    waiting: () => !ended && child.exitCode === null && child.signalCode === null,
    async claim(target) {
      claimed = await fs.rename(outputFile, target).then(
        () => true,
        () => false,
      );
      return claimed;
    },
    launch(cmd, watch) {
      const watched = watchProcess(child, watch);
      child.stdin?.end(`${cmd.cwd}\0${Buffer.byteLength(cmd.command)}\0${cmd.command}`);
      return watched;
    },
    release: () => holdings.release(),
    async dispose() {
      killGroup(child);
      await gone;
      await holdings.release();
      if (!claimed) await fs.rm(outputFile, { force: true });
    },
  };
}
