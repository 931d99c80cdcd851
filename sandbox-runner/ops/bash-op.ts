import { promises as fs } from 'node:fs';
import path from 'node:path';
import { VIRTUAL_ROOT, type BashResult } from '../protocol.ts';
import type { OpContext } from './op-context.ts';

/** Runs one command in a fresh sandboxed shell; returns merged output, exit status and the new cwd. */
export async function runBash(ctx: OpContext, op: { command: string; timeoutMs: number }): Promise<{ result: BashResult; cwd: string }> {
  const startCwd = await existingCwd(ctx, ctx.request.cwd);
  const outputFile = path.join(path.dirname(ctx.tmpDir), `output-${process.pid}-${Date.now()}.log`);
  try {
    const outcome = await ctx.sandbox.run({
      command: op.command,
      workspaceDir: ctx.paths.root,
      tmpDir: ctx.tmpDir,
      cwd: startCwd,
      env: ctx.request.env,
      timeoutMs: op.timeoutMs,
      outputFile,
      maxOutputBytes: ctx.limits.maxOutputBytes,
    });
    const { text, truncated } = await readCapped(outputFile, ctx.limits.maxOutputBytes);
    return {
      result: {
        type: 'bash',
        output: text,
        exitCode: outcome.exitCode,
        signal: outcome.signal,
        timedOut: outcome.timedOut,
        outputTruncated: truncated || outcome.outputLimitHit,
        durationMs: outcome.durationMs,
      },
      cwd: outcome.finalCwd ?? startCwd,
    };
  } finally {
    await fs.rm(outputFile, { force: true });
  }
}

/** The requested cwd if it still exists as a directory in the workspace; otherwise the root. */
async function existingCwd(ctx: OpContext, cwd: string): Promise<string> {
  if (!ctx.paths.isInside(cwd)) return VIRTUAL_ROOT;
  const st = await fs.stat(ctx.paths.toReal(cwd)).catch(() => undefined);
  return st?.isDirectory() ? path.posix.resolve(VIRTUAL_ROOT, cwd) : VIRTUAL_ROOT;
}

async function readCapped(file: string, maxBytes: number): Promise<{ text: string; truncated: boolean }> {
  const handle = await fs.open(file, 'r');
  try {
    const { size } = await handle.stat();
    const length = Math.min(size, maxBytes);
    const buf = Buffer.alloc(length);
    await handle.read(buf, 0, length, 0);
    return { text: buf.toString('utf8'), truncated: size > maxBytes };
  } finally {
    await handle.close();
  }
}
