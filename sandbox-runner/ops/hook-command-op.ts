import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { VIRTUAL_ROOT } from '../common/virtual-paths.ts';
import { STOP_KEY_PATTERN, stopMarkerKey } from '../common/stop-marker-key.ts';
import { watchStopMarker } from './bash-op.ts';
import { defineOp } from './op.ts';

export interface HookCommandResult {
  type: 'hook_command';
  stdout: string;
  stderr: string;
  /** null when the command was killed (timeout, output cap). */
  exitCode: number | null;
  timedOut: boolean;
  durationMs: number;
}

/** The most of a hook's stdout (its JSON answer) and stderr kept; the rest is cut. */
export const HOOK_STDOUT_MAX_BYTES = 1024 * 1024;
export const HOOK_STDERR_MAX_BYTES = 64 * 1024;
/** Where a hook's stdin and stderr files live, inside the workspace's tmp dir (the command's /tmp). */
const HOOK_IO_DIR = '.stratus-hooks';

/**
 * Runs a repository's command hook in the same sandbox as a Bash command (the workspace at
 * /workspace, its private /tmp, the session's network policy and variables), from /workspace,
 * with the hook's input JSON on stdin, and returns stdout, stderr and the exit status apart:
 * what they mean is the harness's business (functions/hooks/command-hook.ts). The hook may
 * change files (a formatter after an edit), so the op publishes like Bash does.
 */
const hookCommandSchema = z.object({
  type: z.literal('hook_command'),
  command: z.string().min(1).max(10_000),
  stdin: z.string().max(4 * 1024 * 1024),
  timeoutMs: z.number().int().positive().max(600_000),
  /** As Bash's: the command is killed when this stop marker appears (its turn was interrupted). */
  stopKey: z.string().regex(STOP_KEY_PATTERN).optional(),
});

export const hookCommandOp = defineOp({
  schema: hookCommandSchema,
  mutatesWorkspace: true,
  async run(ctx, op) {
    const id = randomBytes(8).toString('hex');
    const ioDir = path.join(ctx.tmpDir, HOOK_IO_DIR, id);
    await fs.mkdir(ioDir, { recursive: true });
    const stdinFile = path.join(ioDir, 'stdin.json');
    const stdoutFile = path.join(ioDir, 'stdout');
    await fs.writeFile(stdinFile, op.stdin);
    // The sandbox gives a command one merged output stream: the shell's own redirections split
    // stderr off into a file and feed stdin, on the command's first line so its line numbers hold.
    // $TMPDIR is the workspace's tmp dir as the command sees it, in every sandbox (/tmp under bwrap,
    // its real path in the process sandbox); no repository variable can change it.
    const inside = `$TMPDIR/${HOOK_IO_DIR}/${id}`;
    const stop = op.stopKey ? watchStopMarker(ctx, stopMarkerKey(op.stopKey)) : undefined;
    try {
      const outcome = await ctx.sandbox.run({
        command: `exec <"${inside}/stdin.json" 2>"${inside}/stderr"; ${op.command}`,
        workspaceDir: ctx.paths.root,
        tmpDir: ctx.tmpDir,
        cwd: VIRTUAL_ROOT,
        env: { ...ctx.request.env, CLAUDE_PROJECT_DIR: VIRTUAL_ROOT },
        timeoutMs: op.timeoutMs,
        outputFile: stdoutFile,
        maxOutputBytes: ctx.limits.maxOutputBytes,
        allowedDomains: ctx.request.network.allowedDomains,
        egressToken: ctx.request.network.egressToken,
        mailbox: ctx.remote,
        ...(stop ? { stop: stop.signal } : {}),
      });
      const result: HookCommandResult = {
        type: 'hook_command',
        stdout: await readUpTo(stdoutFile, Math.min(HOOK_STDOUT_MAX_BYTES, ctx.limits.maxOutputBytes)),
        stderr: await readUpTo(path.join(ioDir, 'stderr'), HOOK_STDERR_MAX_BYTES),
        exitCode: outcome.exitCode,
        timedOut: outcome.timedOut,
        durationMs: outcome.durationMs,
      };
      return { result };
    } finally {
      stop?.end();
      await fs.rm(ioDir, { recursive: true, force: true });
    }
  },
});

async function readUpTo(file: string, maxBytes: number): Promise<string> {
  const handle = await fs.open(file, 'r').catch(() => undefined);
  if (!handle) return '';
  try {
    const buf = Buffer.alloc(maxBytes);
    const { bytesRead } = await handle.read(buf, 0, maxBytes, 0);
    return buf.subarray(0, bytesRead).toString('utf8');
  } finally {
    await handle.close();
  }
}
