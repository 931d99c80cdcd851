import { z } from 'zod';

export const HOOK_EVENTS = ['PreToolUse', 'PostToolUse', 'PostToolUseFailure'] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];

/** What a hook receives (as the JSON body of an HTTP hook, or the argument of a function hook). */
export interface HookInput {
  event: HookEvent;
  sessionId: string;
  turnId: string;
  toolName: string;
  toolUseId: string;
  toolInput: unknown;
  permissionMode: string;
  /** PostToolUse: the tool_result content the model would see. */
  toolResponse?: unknown;
  /** PostToolUseFailure: the error text. */
  error?: string;
}

/**
 * What a hook may answer; every field is optional and an empty answer means "carry on".
 * The kinds (docs/tool-pipeline.md, "Hooks"): a permission verdict, a replaced input, context for the model,
 * a rewritten output (external tools only), or a request to stop the turn.
 */
export const hookOutputSchema = z.object({
  decision: z.enum(['allow', 'deny', 'ask']).optional(),
  reason: z.string().max(10_000).optional(),
  updatedInput: z.record(z.string(), z.unknown()).optional(),
  additionalContext: z.string().max(10_000).optional(),
  updatedOutput: z.unknown().optional(),
  /** `false` stops the turn after this tool call. */
  continue: z.boolean().optional(),
  stopReason: z.string().max(2_000).optional(),
});
export type HookOutput = z.output<typeof hookOutputSchema>;

export type HookHandler = (input: HookInput, signal: AbortSignal) => Promise<HookOutput | undefined>;

/** One configured hook, whatever its transport. */
export interface HookDefinition {
  name: string;
  event: HookEvent;
  /** Tool names (`Bash`, `Edit|Write`), a regular expression, or `*` / absent for every tool. */
  matcher?: string;
  timeoutMs: number;
  /** What a failure (throw, timeout, bad answer) means: `open` carries on, `closed` blocks the call. */
  failMode: 'open' | 'closed';
  run: HookHandler;
}

export const DEFAULT_HOOK_TIMEOUT_MS = 10_000;
