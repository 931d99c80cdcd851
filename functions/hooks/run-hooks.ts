import { errorMessage } from '../shared/errors.ts';
import type { Logger } from '../shared/logger.ts';
import type { HookDefinition, HookEvent, HookInput, HookOutput } from './types.ts';

/** Hooks slower than this are summarised to the log at debug level; past the second, at info. */
export const HOOK_TIMING_DISPLAY_THRESHOLD_MS = 500;
export const SLOW_PHASE_LOG_THRESHOLD_MS = 2_000;

/** One hook's answer, or why it has none. */
export type HookRun =
  | { hook: HookDefinition; ok: true; output: HookOutput; durationMs: number }
  | { hook: HookDefinition; ok: false; error: string; durationMs: number };

export function hookMatches(hook: HookDefinition, event: HookEvent, toolName: string): boolean {
  if (hook.event !== event) return false;
  const matcher = hook.matcher?.trim();
  if (!matcher || matcher === '*') return true;
  if (/^[A-Za-z0-9_|-]+$/.test(matcher)) return matcher.split('|').includes(toolName);
  try {
    return new RegExp(`^(?:${matcher})$`).test(toolName);
  } catch {
    return false;
  }
}

/**
 * Runs every hook for this event and tool at once and returns their answers in configuration
 * order. A hook that throws, times out or answers nonsense is reported as failed; what that
 * means (carry on or block) is the caller's business, by the hook's failMode.
 */
export async function runHooks(
  hooks: readonly HookDefinition[],
  input: HookInput,
  opts: { signal: AbortSignal; log: Logger; clock?: () => number },
): Promise<HookRun[]> {
  const matching = hooks.filter((h) => hookMatches(h, input.event, input.toolName));
  if (matching.length === 0) return [];
  const clock = opts.clock ?? Date.now;
  const started = clock();
  const runs = await Promise.all(matching.map((hook) => runOne(hook, input, opts.signal, clock)));
  const durationMs = clock() - started;
  if (durationMs >= SLOW_PHASE_LOG_THRESHOLD_MS) {
    opts.log.info(`Slow ${input.event} hooks: ${durationMs}ms for ${input.toolName}`, { hooks: runs.map((r) => [r.hook.name, r.durationMs]) });
  } else if (durationMs > HOOK_TIMING_DISPLAY_THRESHOLD_MS) {
    opts.log.debug(`${input.event} hooks took ${durationMs}ms for ${input.toolName}`, { hooks: runs.map((r) => [r.hook.name, r.durationMs]) });
  }
  for (const run of runs) {
    if (!run.ok) opts.log.warn('hook failed', { hook: run.hook.name, event: input.event, failMode: run.hook.failMode, error: run.error });
  }
  return runs;
}

async function runOne(hook: HookDefinition, input: HookInput, parent: AbortSignal, clock: () => number): Promise<HookRun> {
  const started = clock();
  const controller = new AbortController();
  const onAbort = () => controller.abort(parent.reason);
  parent.addEventListener('abort', onAbort, { once: true });
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    // Race the timer too: an in-process hook may ignore its signal.
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        controller.abort(new Error('timeout'));
        reject(new Error(`timed out after ${hook.timeoutMs}ms`));
      }, hook.timeoutMs);
    });
    const output = await Promise.race([hook.run(input, controller.signal), timeout]);
    return { hook, ok: true, output: output ?? {}, durationMs: clock() - started };
  } catch (err) {
    return { hook, ok: false, error: errorMessage(err), durationMs: clock() - started };
  } finally {
    if (timer) clearTimeout(timer);
    parent.removeEventListener('abort', onAbort);
  }
}
