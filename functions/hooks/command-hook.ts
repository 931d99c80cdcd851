import { createHash } from 'node:crypto';
import type { HookDefinition, HookEvent, HookInput, HookOutput } from './types.ts';

/** A command hook as a repository's `.claude/settings.json` declares it, flattened to one event and matcher. */
export interface CommandHookConfig {
  event: HookEvent;
  matcher?: string;
  command: string;
  /** Seconds; the default is COMMAND_HOOK_DEFAULT_TIMEOUT_S. */
  timeoutS?: number;
}

/** Seconds a command hook may run when it names no timeout, and the most it may name (docs/context.md). */
export const COMMAND_HOOK_DEFAULT_TIMEOUT_S = 60;
export const COMMAND_HOOK_MAX_TIMEOUT_S = 600;
/** Time on top of the command's own timeout for the round trip to the runner, before the harness gives up on it. */
const RUNNER_MARGIN_MS = 15_000;

/** What the command produced, as the runner's `hook_command` op reports it. */
export interface CommandHookOutcome {
  stdout: string;
  stderr: string;
  exitCode: number | null;
  timedOut: boolean;
}

/** One run of a hook's command: `stopKey` names the marker that kills it when `signal` aborts (an interrupted turn). */
export interface SandboxedHookRun {
  command: string;
  stdin: string;
  timeoutMs: number;
  stopKey: string;
  signal: AbortSignal;
}

/** Runs a hook's command inside the session's sandbox (never on the API side): the runner's `hook_command` op. */
export type SandboxedHookRunner = (run: SandboxedHookRun) => Promise<CommandHookOutcome>;

/**
 * A command hook: its input goes to the command's stdin as JSON in the shape repository hooks are
 * written for (snake_case fields, docs/context.md "Repository settings"), and its exit status and
 * output are read by that contract: exit 0 with a JSON object on stdout is an answer, other
 * stdout is ignored; exit 2 blocks, with stderr as the reason the model reads; any other status,
 * a timeout or a runner failure is a failure that does not block (failMode `open`).
 */
export function createCommandHook(config: CommandHookConfig, opts: { run: SandboxedHookRunner; cwd: () => string }): HookDefinition {
  const timeoutMs = Math.min(config.timeoutS ?? COMMAND_HOOK_DEFAULT_TIMEOUT_S, COMMAND_HOOK_MAX_TIMEOUT_S) * 1000;
  const id = createHash('sha256')
    .update(`${config.event}\n${config.matcher ?? ''}\n${config.command}`)
    .digest('hex')
    .slice(0, 12);
  return {
    name: `${config.event}:command:${config.command.slice(0, 80)}`,
    event: config.event,
    matcher: config.matcher,
    timeoutMs: timeoutMs + RUNNER_MARGIN_MS,
    failMode: 'open',
    async run(input, signal): Promise<HookOutput | undefined> {
      const stdin = JSON.stringify(commandHookInput(input, opts.cwd()));
      const outcome = await opts.run({ command: config.command, stdin, timeoutMs, stopKey: hookStopKey(id, input), signal });
      return interpretCommandOutcome(config.command, outcome, config.event);
    },
  };
}

/**
 * The stop marker's name for one hook on one call: the hook, the turn and the tool_use (as Bash's,
 * unique across turns), restricted to what the runner accepts.
 */
function hookStopKey(hookId: string, input: HookInput): string {
  return `hook_${hookId}_${input.turnId}_${input.toolUseId}`.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 128);
}

/** The stdin JSON of a command hook. There is no `transcript_path`: the transcript does not live in the sandbox. */
export function commandHookInput(input: HookInput, cwd: string): Record<string, unknown> {
  return {
    session_id: input.sessionId,
    cwd,
    permission_mode: input.permissionMode,
    hook_event_name: input.event,
    tool_name: input.toolName,
    tool_input: input.toolInput,
    ...(input.toolResponse !== undefined ? { tool_response: input.toolResponse } : {}),
    ...(input.error !== undefined ? { error: input.error } : {}),
    tool_use_id: input.toolUseId,
  };
}

/**
 * What the command's exit status and output say, as a HookOutput; a failure is thrown (the hook's
 * failMode decides). A block names its command for the model, except an exit 2 before the call,
 * whose reason already does.
 */
export function interpretCommandOutcome(command: string, outcome: CommandHookOutcome, event: HookEvent = 'PreToolUse'): HookOutput | undefined {
  if (outcome.timedOut) throw new Error('the hook command timed out');
  if (outcome.exitCode === 2) {
    const reason = `[${command}]: ${outcome.stderr || 'No stderr output'}`.slice(0, 10_000);
    return event === 'PreToolUse' ? { decision: 'deny', reason } : { decision: 'deny', reason, blockingCommand: command };
  }
  if (outcome.exitCode !== 0) throw new Error(`the hook command exited with ${outcome.exitCode ?? 'a signal'}: ${outcome.stderr.slice(0, 500)}`);
  const trimmed = outcome.stdout.trim();
  if (!trimmed.startsWith('{')) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch {
    // Not JSON after all: plain output, which carries no answer.
    return undefined;
  }
  if (!isRecord(value)) return undefined;
  const answer = answerOf(value);
  return answer.decision === 'deny' ? { ...answer, blockingCommand: command } : answer;
}

const DECISIONS: Record<string, HookOutput['decision']> = { allow: 'allow', approve: 'allow', deny: 'deny', block: 'deny', ask: 'ask' };

/** The answer's fields: `hookSpecificOutput` (permissionDecision, its reason, updatedInput, additionalContext) over the top-level `decision`/`reason`. */
function answerOf(json: Record<string, unknown>): HookOutput {
  const specific = isRecord(json.hookSpecificOutput) ? json.hookSpecificOutput : {};
  const decision = DECISIONS[String(specific.permissionDecision ?? json.decision ?? '')];
  const reason = text(specific.permissionDecisionReason) ?? text(json.reason);
  const context = text(specific.additionalContext);
  const out: HookOutput = {};
  if (decision) out.decision = decision;
  if (reason !== undefined) out.reason = reason.slice(0, 10_000);
  if (isRecord(specific.updatedInput)) out.updatedInput = specific.updatedInput;
  if (context !== undefined) out.additionalContext = context.slice(0, 10_000);
  if (json.continue === false) out.continue = false;
  const stopReason = text(json.stopReason);
  if (stopReason !== undefined) out.stopReason = stopReason.slice(0, 2_000);
  return out;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}
