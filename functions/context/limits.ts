/**
 * Size limits of the context economy (docs/context.md).
 */

/** No tool result above this many characters is inlined, whatever the tool declares. */
export const DEFAULT_MAX_RESULT_SIZE_CHARS = 50_000;
/** Tool results in one API-level user message together stay under this; the largest fresh ones are persisted. */
export const MAX_TOOL_RESULTS_PER_MESSAGE_CHARS = 200_000;
/** How much of a persisted result the model sees inline. */
export const PREVIEW_SIZE_BYTES = 2000;
/** A rough token size for text, where nothing better is known. */
export const BYTES_PER_TOKEN = 4;

export interface ContextLimits {
  /** Global cap on a tool's inline result (chars). */
  defaultMaxResultSizeChars: number;
  /** Per-tool thresholds that win over the tool's own value and the cap (chars). */
  persistThresholdOverrides: Readonly<Record<string, number>>;
  /** Aggregate budget for the tool results of one API-level user message (chars). */
  perMessageBudgetChars: number;
}

export const DEFAULT_CONTEXT_LIMITS: ContextLimits = {
  defaultMaxResultSizeChars: DEFAULT_MAX_RESULT_SIZE_CHARS,
  persistThresholdOverrides: {},
  perMessageBudgetChars: MAX_TOOL_RESULTS_PER_MESSAGE_CHARS,
};

/**
 * The size above which a tool's result is persisted instead of inlined. Infinity opts out for
 * good (Read: persisting what Read returns would send the model Reading its own output in a
 * loop), checked before the override table so no override can turn it back on. Otherwise an
 * override wins; otherwise the smaller of the tool's value and the global cap.
 */
export function getPersistenceThreshold(toolName: string, declaredMaxResultSizeChars: number, limits: ContextLimits = DEFAULT_CONTEXT_LIMITS): number {
  if (!Number.isFinite(declaredMaxResultSizeChars)) return declaredMaxResultSizeChars;
  const override = limits.persistThresholdOverrides[toolName];
  if (typeof override === 'number' && Number.isFinite(override) && override > 0) return override;
  return Math.min(declaredMaxResultSizeChars, limits.defaultMaxResultSizeChars);
}
