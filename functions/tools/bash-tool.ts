import { z } from 'zod';
import { isInsideWorkspace, VIRTUAL_ROOT } from '../../sandbox-runner/common/virtual-paths.ts';
import { isReadOnlyCommand } from './bash/classify-command.ts';
import { bashCommandParts } from './bash/command-parts.ts';
import { loadShellParser } from './bash/shell-parser.ts';
import { buildTool } from './tool.ts';

export const BASH_TOOL_NAME = 'Bash';
export const DEFAULT_BASH_TIMEOUT_MS = 120_000;
export const MAX_BASH_TIMEOUT_MS = 600_000;

// Start loading the shell grammar now: until it is ready every command counts as not read-only.
void loadShellParser();

const inputSchema = z.strictObject({
  command: z.string().describe('The command to execute'),
  // Larger values are not refused: they are capped at the maximum (docs/tools.md, "Bash").
  timeout: z.number().int().positive().optional().describe(`Optional timeout in milliseconds (max ${MAX_BASH_TIMEOUT_MS})`),
  description: z.string().optional().describe('Clear, concise description of what this command does in 5-10 words'),
  run_in_background: z.boolean().optional().describe('Start the command as a background task and return its id at once; read its output later with TaskOutput'),
});

/** @internal the tool's output shape, for its tests */
export interface BashOutput {
  output: string;
  exitCode: number | null;
  timedOut: boolean;
  timeoutMs: number;
  cwdReset: boolean;
  backgroundTaskId?: string;
  outputPath?: string;
  image?: { mediaType: string; base64: string };
}

/**
 * The stop marker's name for a call: its turn and tool_use ids, restricted to what the runner
 * accepts. A marker stays in storage for a day, so a tool_use id alone is not enough: a later
 * turn's call reusing that id (a model or proxy that repeats ids) would be killed at its start.
 */
function stopKeyOf(turnId: string, toolUseId: string): string {
  return `${turnId}_${toolUseId}`.replace(/[^A-Za-z0-9_-]/g, '_').slice(-128);
}

export const bashTool = buildTool({
  name: BASH_TOOL_NAME,
  inputSchema,
  compactableResult: true,
  description:
    'Executes a bash command in a fresh shell in the workspace (/workspace) and returns its combined stdout and stderr. ' +
    'The working directory carries over between calls; stdin is closed; there is no network access unless the session allows it. ' +
    `Default timeout ${DEFAULT_BASH_TIMEOUT_MS / 1000}s, at most ${MAX_BASH_TIMEOUT_MS / 1000}s; a command still running at its timeout ` +
    'keeps running as a background task. Set run_in_background for long jobs; read their output with TaskOutput, stop them with TaskStop.',
  maxResultSizeChars: 30_000,
  isReadOnly: (input) => isReadOnlyCommand(input.command),
  isConcurrencySafe: (input) => isReadOnlyCommand(input.command),
  // Content rules match each simple command of the line, not the line as a string (docs/security.md, "Bash rules").
  commandParts: (input) => bashCommandParts(input.command),
  // An interrupt kills a running command (through its stop marker in the runner).
  interruptBehavior: () => 'cancel',
  async call(input, ctx) {
    const timeoutMs = Math.min(input.timeout ?? DEFAULT_BASH_TIMEOUT_MS, MAX_BASH_TIMEOUT_MS);
    const stopKey = ctx.workspace.canStop ? stopKeyOf(ctx.turnId, ctx.toolUseId) : undefined;
    const result = await ctx.workspace.run(
      { type: 'bash', command: input.command, timeoutMs, background: input.run_in_background ? 'now' : 'on_timeout', ...(stopKey ? { stopKey } : {}) },
      stopKey ? { signal: ctx.signal, key: stopKey } : undefined,
    );
    // A command may cd anywhere it can see; the next call starts back inside the workspace.
    const cwd = ctx.workspace.cwd;
    const cwdReset = !isInsideWorkspace(cwd);
    if (cwdReset) ctx.workspace.setCwd(VIRTUAL_ROOT);
    return {
      data: {
        output: result.output,
        exitCode: result.exitCode,
        timedOut: result.timedOut,
        timeoutMs,
        cwdReset,
        ...(result.backgroundTaskId ? { backgroundTaskId: result.backgroundTaskId, outputPath: result.outputPath } : {}),
        ...(result.image ? { image: result.image } : {}),
      },
    };
  },
  mapToolResultToToolResultBlockParam(out, toolUseId) {
    if (out.backgroundTaskId) {
      // Still running: what it printed so far, then where the rest goes.
      const notice = `Command running in background with ID: ${out.backgroundTaskId}. Output is being written to: ${out.outputPath}`;
      const sofar = out.output.replace(/^(\s*\n)+/, '').trimEnd();
      return { type: 'tool_result', tool_use_id: toolUseId, content: [sofar, notice].filter(Boolean).join('\n') };
    }
    if (out.image && out.exitCode === 0) {
      const image = { type: 'image' as const, source: { type: 'base64' as const, media_type: out.image.mediaType as 'image/png', data: out.image.base64 } };
      return { type: 'tool_result', tool_use_id: toolUseId, content: [image] };
    }
    const parts: string[] = [];
    // Long output is not cut here: past maxResultSizeChars the harness persists the whole of it
    // and the model gets a preview and a path it can Read (functions/context, docs/context.md).
    const output = out.output.replace(/\n+$/, '');
    if (output) parts.push(output);
    if (out.timedOut) parts.push(`Command timed out after ${out.timeoutMs / 1000}s`);
    if (out.cwdReset) parts.push(`Shell cwd was reset to ${VIRTUAL_ROOT}`);
    const failed = out.timedOut || (out.exitCode !== 0 && out.exitCode !== null) || out.exitCode === null;
    if (failed && !out.timedOut) parts.unshift(`Exit code ${out.exitCode ?? 'unknown (killed)'}`);
    const content = parts.length ? parts.join('\n') : '(Bash completed with no output)';
    return { type: 'tool_result', tool_use_id: toolUseId, content, is_error: failed || undefined };
  },
});
