import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, statSync } from 'node:fs';

const OUTPUT_POLL_MS = 100;

export interface WatchedProcess {
  pid: number | undefined;
  /** SIGKILL the whole process group. */
  kill(): void;
  /** Resolves when the process exits; says whether the time or output cap, or the stop signal, killed it. */
  finished: Promise<{ code: number | null; signal: string | null; timedOut: boolean; outputLimitHit: boolean; interrupted: boolean }>;
}

/** The caps a process is watched against, from the moment its command starts. */
export interface WatchOptions {
  outputFile: string;
  maxOutputBytes: number;
  timeoutMs: number | undefined;
  stop?: AbortSignal;
}

/**
 * Starts a command in its own process group with stdout and stderr merged into one file, and
 * kills the group when the output passes its cap or (unless `timeoutMs` is undefined) when
 * time runs out, or when `stop` aborts (the turn was interrupted). What both sandboxes share; what surrounds the process differs.
 */
export function spawnWatched(file: string, args: string[], opts: WatchOptions & { env: Record<string, string>; cwd: string }): WatchedProcess {
  return watchProcess(spawnInGroup(file, args, { ...opts, stdin: 'ignore' }), opts);
}

/**
 * The spawn alone: its own process group, stdout and stderr merged into `outputFile`, stdin
 * empty or (`pipe`) a pipe the caller writes the command into later (warm-bwrap.ts).
 */
export function spawnInGroup(
  file: string,
  args: string[],
  opts: { env: Record<string, string>; cwd: string; outputFile: string; stdin: 'ignore' | 'pipe' },
): ChildProcess {
  const outFd = openSync(opts.outputFile, 'w');
  try {
    return spawn(file, args, { stdio: [opts.stdin, outFd, outFd], detached: true, env: opts.env, cwd: opts.cwd });
  } finally {
    closeSync(outFd);
  }
}

/** Kills the process group of `child` (SIGKILL); nothing when it is gone. */
export function killGroup(child: ChildProcess): void {
  try {
    if (child.pid) process.kill(-child.pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** Watches a spawned process against the time and output caps and the stop signal, from now on. */
export function watchProcess(child: ChildProcess, opts: WatchOptions): WatchedProcess {
  let timedOut = false;
  let outputLimitHit = false;
  let interrupted = false;
  const kill = () => killGroup(child);
  const timer =
    opts.timeoutMs === undefined
      ? undefined
      : setTimeout(() => {
          timedOut = true;
          kill();
        }, opts.timeoutMs);
  const onStop = () => {
    interrupted = true;
    kill();
  };
  if (opts.stop?.aborted) onStop();
  else opts.stop?.addEventListener('abort', onStop, { once: true });
  const poll = setInterval(() => {
    if ((statSync(opts.outputFile, { throwIfNoEntry: false })?.size ?? 0) > opts.maxOutputBytes) {
      outputLimitHit = true;
      kill();
    }
  }, OUTPUT_POLL_MS);
  const finished = new Promise<{ code: number | null; signal: string | null }>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal }));
  })
    .finally(() => {
      clearTimeout(timer);
      clearInterval(poll);
      opts.stop?.removeEventListener('abort', onStop);
    })
    .then(({ code, signal }) => ({ code, signal, timedOut, outputLimitHit, interrupted }));
  return { pid: child.pid, kill, finished };
}
