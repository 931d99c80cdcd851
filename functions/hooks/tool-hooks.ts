import type { Logger } from '../shared/logger.ts';
import { runHooks } from './run-hooks.ts';
import type { HookDefinition, HookInput } from './types.ts';

/**
 * The result kinds of the PreToolUse phase (docs/tool-pipeline.md, "Hooks"), folded into one value: a
 * permission verdict, a replaced input, context for the model, and a request to stop the turn.
 */
export interface PreToolUseResult {
  permission?: { behavior: 'allow' | 'deny' | 'ask'; message: string; hookName: string };
  updatedInput?: Record<string, unknown>;
  additionalContext: string[];
  preventContinuation: boolean;
  stopReason?: string;
}

export interface PostToolUseResult {
  /** Replaces an external tool's output (ignored for built-in tools). */
  updatedOutput?: unknown;
  additionalContext: string[];
  preventContinuation: boolean;
  stopReason?: string;
}

type ToolHookInput = Omit<HookInput, 'event' | 'toolResponse' | 'error'>;
interface RunOpts {
  signal: AbortSignal;
  log: Logger;
}

const VERDICT_RANK = { deny: 3, ask: 2, allow: 1 } as const;

/** Runs PreToolUse hooks. Among verdicts the strictest wins: deny over ask over allow. */
export async function runPreToolUseHooks(hooks: readonly HookDefinition[], input: ToolHookInput, opts: RunOpts): Promise<PreToolUseResult> {
  const result: PreToolUseResult = { additionalContext: [], preventContinuation: false };
  const runs = await runHooks(hooks, { ...input, event: 'PreToolUse' }, opts);
  const hookName = `PreToolUse:${input.toolName}`;
  for (const run of runs) {
    if (!run.ok) {
      if (run.hook.failMode === 'closed') {
        considerVerdict(result, { behavior: 'deny', message: hookErrorMessage(hookName, `hook ${run.hook.name} failed: ${run.error}`), hookName });
      }
      continue;
    }
    const out = run.output;
    if (out.decision === 'deny' && out.blockingCommand !== undefined) {
      considerVerdict(result, { behavior: 'deny', message: out.reason || 'Blocked by hook', hookName });
      result.additionalContext.push(blockingErrorText(hookName, out.blockingCommand, out.reason || 'Blocked by hook'));
    } else if (out.decision === 'deny') {
      considerVerdict(result, { behavior: 'deny', message: hookErrorMessage(hookName, out.reason || 'Blocked by hook'), hookName });
    } else if (out.decision) {
      const verb = out.decision === 'allow' ? 'allowed' : 'asked for confirmation for';
      considerVerdict(result, { behavior: out.decision, message: out.reason || `Hook ${hookName} ${verb} this tool`, hookName });
    }
    if (out.updatedInput) result.updatedInput = out.updatedInput;
    if (out.additionalContext) result.additionalContext.push(additionalContextText(hookName, out.additionalContext));
    if (out.continue === false) {
      result.preventContinuation = true;
      result.stopReason ??= out.stopReason;
    }
  }
  return result;
}

/** Runs PostToolUse hooks (after success) or PostToolUseFailure hooks (after an error result). */
export async function runPostToolUseHooks(
  hooks: readonly HookDefinition[],
  input: ToolHookInput & { toolResponse?: unknown; error?: string },
  failed: boolean,
  opts: RunOpts,
): Promise<PostToolUseResult> {
  const event = failed ? 'PostToolUseFailure' : 'PostToolUse';
  const hookName = `${event}:${input.toolName}`;
  const result: PostToolUseResult = { additionalContext: [], preventContinuation: false };
  const runs = await runHooks(hooks, { ...input, event }, opts);
  for (const run of runs) {
    if (!run.ok) {
      if (run.hook.failMode === 'closed') result.additionalContext.push(hookErrorMessage(hookName, `hook ${run.hook.name} failed: ${run.error}`));
      continue;
    }
    const out = run.output;
    if (out.updatedOutput !== undefined) result.updatedOutput = out.updatedOutput;
    if (out.decision === 'deny') {
      const reason = out.reason || 'Blocked by hook';
      result.additionalContext.push(
        out.blockingCommand !== undefined ? blockingErrorText(hookName, out.blockingCommand, reason) : hookErrorMessage(hookName, reason),
      );
    }
    if (out.additionalContext) result.additionalContext.push(additionalContextText(hookName, out.additionalContext));
    if (out.continue === false) {
      result.preventContinuation = true;
      result.stopReason ??= out.stopReason;
    }
  }
  return result;
}

function considerVerdict(result: PreToolUseResult, verdict: NonNullable<PreToolUseResult['permission']>): void {
  if (!result.permission || VERDICT_RANK[verdict.behavior] > VERDICT_RANK[result.permission.behavior]) result.permission = verdict;
}

export function hookErrorMessage(hookName: string, reason: string): string {
  return `${hookName} hook error: ${reason}`;
}

/** A command hook's block, for the model: which command blocked, and why. */
export function blockingErrorText(hookName: string, command: string, reason: string): string {
  return `<system-reminder>\n${hookName} hook blocking error from command: "${command}": ${reason}\n</system-reminder>`;
}

export function additionalContextText(hookName: string, context: string): string {
  return `<system-reminder>\n${hookName} hook additional context: ${context}\n</system-reminder>`;
}
