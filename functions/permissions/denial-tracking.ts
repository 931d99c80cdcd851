/** Counts of denied calls per tool for one session, kept in the session record. */
export type DenialCounts = Record<string, number>;

/** Counts at which clients are told they could add a rule instead of refusing again. */
export const DENIAL_SUGGESTION_COUNTS: readonly number[] = [1, 3, 5];

export function recordDenial(counts: DenialCounts, toolName: string): { counts: DenialCounts; count: number; suggestion?: string } {
  const count = (counts[toolName] ?? 0) + 1;
  const next = { ...counts, [toolName]: count };
  return DENIAL_SUGGESTION_COUNTS.includes(count) ? { counts: next, count, suggestion: denialSuggestion(toolName, count) } : { counts: next, count };
}

export function denialSuggestion(toolName: string, count: number): string {
  return `${toolName} was denied ${count} ${count === 1 ? 'time' : 'times'} in this session; add an allow or deny rule for it?`;
}

/** The summary API clients see. */
export function denialSummary(counts: DenialCounts | undefined) {
  return Object.entries(counts ?? {})
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([tool, count]) => ({ tool, count, suggestion: denialSuggestion(tool, count) }));
}
