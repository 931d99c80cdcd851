import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import type { ContentReplacementState, ReplacementDecisions } from './replacement-state.ts';

/** What the model sees in place of a cleared tool result. */
export const TOOL_RESULT_CLEARED_MESSAGE = '[Old tool result content cleared]';

/**
 * Clears every compactable tool result but the most recent `keepRecent`, as replacement
 * decisions: once recorded they are re-applied like any other replacement, so the cleared
 * conversation is byte-stable from then on. `isCompactable` says, by tool name, which results may
 * be cleared: those a tool declares it can produce again (`compactableResult` on the tool).
 * Returns the new decisions (none when nothing to clear).
 */
export function microCompact(
  messages: readonly MessageParam[],
  state: ContentReplacementState,
  keepRecent: number,
  isCompactable: (toolName: string) => boolean,
): ReplacementDecisions {
  const names = new Map<string, string>();
  const ids: string[] = [];
  for (const m of messages) {
    if (typeof m.content === 'string') continue;
    for (const b of m.content) {
      if (m.role === 'assistant' && b.type === 'tool_use') names.set(b.id, b.name);
      else if (m.role === 'user' && b.type === 'tool_result' && isCompactable(names.get(b.tool_use_id) ?? '')) ids.push(b.tool_use_id);
    }
  }
  const decisions: ReplacementDecisions = { seen: [], replaced: [] };
  for (const id of ids.slice(0, Math.max(0, ids.length - keepRecent))) {
    if (state.replacements.get(id) === TOOL_RESULT_CLEARED_MESSAGE) continue;
    state.seenIds.add(id);
    state.replacements.set(id, TOOL_RESULT_CLEARED_MESSAGE);
    decisions.replaced.push({ toolUseId: id, replacement: TOOL_RESULT_CLEARED_MESSAGE });
  }
  return decisions;
}
