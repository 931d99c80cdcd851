import { promises as fs } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { VIRTUAL_ROOT } from '../virtual-paths.ts';
import { defineOp } from './op.ts';
import type { SandboxOutcome } from '../isolation/sandbox.ts';
import type { OpContext } from './op-context.ts';

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
  /** A sandbox cap the command ran into; `output` ends with a sentence saying so. */
  resourceLimit?: 'memory' | 'processes' | 'output';
}

/** Runs one command in a fresh sandboxed shell; returns merged output, exit status and the new cwd. */
export const bashOp = defineOp({
  schema: z.object({
    type: z.literal('bash'),
    command: z.string(),
    timeoutMs: z.number().int().positive(),
  }),
  mutatesWorkspace: true,
  async run(ctx, op) {
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
        allowedDomains: ctx.request.network.allowedDomains,
      });
      const { text, truncated } = await readCapped(outputFile, ctx.limits.maxOutputBytes);
      const resourceLimit = outcome.limitHit?.kind ?? (outcome.outputLimitHit ? 'output' : undefined);
      const notice = limitNotice(outcome, ctx.limits.maxOutputBytes);
      const result: BashResult = {
        type: 'bash',
        output: notice ? `${text}${text && !text.endsWith('\n') ? '\n' : ''}${notice}\n` : text,
        exitCode: outcome.exitCode,
        signal: outcome.signal,
        timedOut: outcome.timedOut,
        outputTruncated: truncated || outcome.outputLimitHit,
        durationMs: outcome.durationMs,
        ...(resourceLimit ? { resourceLimit } : {}),
      };
      return { result, cwd: outcome.finalCwd ?? startCwd };
    } finally {
      await fs.rm(outputFile, { force: true });
    }
  },
});

/** The sentence the model reads when a sandbox cap stopped its command. */
function limitNotice(outcome: SandboxOutcome, maxOutputBytes: number): string | undefined {
  const mib = (n: number) => `${Math.round(n / (1024 * 1024))} MiB`;
  if (outcome.limitHit?.kind === 'memory') {
    return `The command was killed: it used more than ${mib(outcome.limitHit.limit)} of memory, the sandbox limit.`;
  }
  if (outcome.limitHit?.kind === 'processes') {
    return `The command hit the sandbox limit of ${outcome.limitHit.limit} processes; new processes could not be started.`;
  }
  if (outcome.outputLimitHit) return `The command was killed: its output passed ${mib(maxOutputBytes)}, the sandbox limit.`;
  return undefined;
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
