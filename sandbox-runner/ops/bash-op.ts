import { promises as fs } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { VIRTUAL_ROOT } from '../common/virtual-paths.ts';
import { defineOp } from './op.ts';
import type { SandboxOutcome } from '../isolation/sandbox.ts';
import { createTaskFiles, type TaskFiles } from './tasks/task-files.ts';
import { createTaskMirror } from './tasks/task-mirror.ts';
import { prepareImage } from './files/image.ts';
import { READ_MAX_TOKENS } from './read-op.ts';
import type { OpContext } from './op-context.ts';
import { STOP_POLL_MS, stopMarkerKey } from '../common/stop-marker-key.ts';
import { bashSandboxSpec } from './sandbox-spec.ts';

export interface BashResult {
  type: 'bash';
  /** stdout and stderr merged in the order they were written. */
  output: string;
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  /** Killed because the harness asked to stop it (its turn was interrupted). */
  interrupted?: boolean;
  /** Set when output passed the runner's cap and was cut. */
  outputTruncated: boolean;
  durationMs: number;
  /** A sandbox cap the command ran into; `output` ends with a sentence saying so. */
  resourceLimit?: 'memory' | 'processes' | 'output';
  /** Set when the command was left running as a background task. */
  backgroundTaskId?: string;
  /** Where the background task's output goes, as commands see it. */
  outputPath?: string;
  /** Set when the whole output was one `data:image/...;base64,` URI: the image, fitted to the model's limits. */
  image?: { mediaType: string; base64: string };
}

/**
 * Runs one command in a fresh sandboxed shell; returns merged output, exit status and the new
 * cwd. `background: 'now'` starts it as a background task; `'on_timeout'` (the default) moves a
 * command that outlives its timeout to the background instead of killing it; `'never'` kills it.
 */
const bashSchema = z.object({
  type: z.literal('bash'),
  command: z.string(),
  timeoutMs: z.number().int().positive(),
  background: z.enum(['never', 'on_timeout', 'now']).default('on_timeout'),
  /**
   * Names this command's stop marker, `stops/{stopKey}` under the workspace's prefix. While the
   * command runs the runner looks for it every STOP_POLL_MS and kills the command when it
   * appears: the harness that was asked to interrupt the turn may be on another machine, and
   * S3 is the one place both can reach.
   */
  stopKey: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,128}$/)
    .optional(),
});

export const bashOp = defineOp({
  schema: bashSchema,
  mutatesWorkspace: true,
  async run(ctx, op) {
    const startCwd = await existingCwd(ctx, ctx.request.cwd);
    const tasks = createTaskFiles(ctx.tmpDir);
    await tasks.ensureDir();
    const taskId = tasks.newTaskId();
    const outputFile = tasks.outputFile(taskId);
    let detached = false;
    const stop = op.stopKey ? watchStopMarker(ctx, stopMarkerKey(op.stopKey)) : undefined;
    try {
      const outcome = await ctx.sandbox.run({
        ...bashSandboxSpec(ctx),
        command: op.command,
        cwd: startCwd,
        timeoutMs: op.timeoutMs,
        outputFile,
        maxOutputBytes: ctx.limits.maxOutputBytes,
        warmAhead: true,
        detachAfterMs: op.background === 'now' ? 0 : op.background === 'on_timeout' ? op.timeoutMs : undefined,
        ...(stop ? { stop: stop.signal } : {}),
      });
      // A detached command is a background task: from now on only TaskStop ends it.
      stop?.end();
      detached = outcome.detached !== undefined;
      const task = outcome.detached ? await startTask(ctx, tasks, { taskId, command: op.command }, outcome.detached) : undefined;
      // Started in the background on request: the answer is only the notice, whatever the
      // command managed to print in the moment before it.
      const { text, truncated } =
        detached && op.background === 'now' ? { text: '', truncated: false } : await readCapped(outputFile, ctx.limits.maxOutputBytes);
      await task?.firstCopy;
      const background = detached ? { backgroundTaskId: taskId, outputPath: tasks.virtualOutputPath(taskId) } : undefined;
      return { result: await bashResult(outcome, { text, truncated }, ctx.limits.maxOutputBytes, background), cwd: outcome.finalCwd ?? startCwd };
    } finally {
      stop?.end();
      if (!detached) await fs.rm(outputFile, { force: true });
    }
  },
});

/** Aborts `signal` once the marker exists; `end` stops looking. A failed look is retried at the next tick. */
export function watchStopMarker(ctx: OpContext, relKey: string): { signal: AbortSignal; end(): void } {
  const abort = new AbortController();
  let ended = false;
  const tick = async () => {
    if (ended) return;
    const found = await ctx.remote.exists(ctx.remote.key(relKey)).catch(() => false);
    if (ended) return;
    if (found) abort.abort();
    else timer = setTimeout(() => void tick(), STOP_POLL_MS);
  };
  let timer = setTimeout(() => void tick(), STOP_POLL_MS);
  return {
    signal: abort.signal,
    end() {
      ended = true;
      clearTimeout(timer);
    },
  };
}

/**
 * Registers a detached command as a background task. Its first S3 copy (`firstCopy`) is stored
 * before the model hears of the task, so any runner can then answer for it.
 */
async function startTask(
  ctx: OpContext,
  tasks: TaskFiles,
  task: { taskId: string; command: string },
  detached: NonNullable<SandboxOutcome['detached']>,
): Promise<{ firstCopy: Promise<void> }> {
  // The command keeps writing to the tree: the copy must outlive this call.
  ctx.retain(detached.done);
  const record = { ...task, pid: detached.pid, status: 'running' as const };
  await tasks.write(record);
  return { firstCopy: tasks.track(record, detached.done, createTaskMirror(ctx.remote)) };
}

async function bashResult(
  outcome: SandboxOutcome,
  { text, truncated }: { text: string; truncated: boolean },
  maxOutputBytes: number,
  background: { backgroundTaskId: string; outputPath: string } | undefined,
): Promise<BashResult> {
  const image = background ? undefined : await imageOutput(text);
  const resourceLimit = outcome.limitHit?.kind ?? (outcome.outputLimitHit ? 'output' : undefined);
  const notice = limitNotice(outcome, maxOutputBytes);
  return {
    type: 'bash',
    output: notice ? `${text}${text && !text.endsWith('\n') ? '\n' : ''}${notice}\n` : text,
    exitCode: outcome.exitCode,
    signal: outcome.signal,
    timedOut: outcome.timedOut,
    ...(outcome.interrupted ? { interrupted: true } : {}),
    outputTruncated: truncated || outcome.outputLimitHit,
    durationMs: outcome.durationMs,
    ...(resourceLimit ? { resourceLimit } : {}),
    ...background,
    ...(image ? { image } : {}),
  };
}

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

const IMAGE_DATA_URI = /^data:image\/(png|jpeg|jpg|gif|webp);base64,([A-Za-z0-9+/=\s]+)$/;

async function imageOutput(output: string): Promise<BashResult['image']> {
  const match = IMAGE_DATA_URI.exec(output.trim());
  if (!match) return undefined;
  const bytes = Buffer.from(match[2]!.replace(/\s/g, ''), 'base64');
  if (bytes.length === 0) return undefined;
  const image = await prepareImage(bytes, match[1]!, READ_MAX_TOKENS);
  return { mediaType: image.mediaType, base64: image.buffer.toString('base64') };
}
