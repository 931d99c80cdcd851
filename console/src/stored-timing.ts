import type { Message } from './api.ts';
import type { WaterfallRow } from './components/timeline.tsx';

/**
 * A stored turn's waterfall, from what the log keeps: each message's `createdAt` (when it was
 * stored) and its turn. A model call runs from the message before its answer (the prompt or the
 * last tool result) to the answer; a tool call from the answer that asked for it to its result.
 * The log does not record when each of several calls from one answer started, so when they ran
 * one after another, each bar also covers the waiting for the ones before it. A call whose
 * result is stored in a later turn (it waited for an approval) is left out.
 */
export interface StoredTurn {
  turnId: string;
  startedAt: number;
  endedAt: number;
  rows: WaterfallRow[];
}

type Block = { type: string; id?: string; name?: string; tool_use_id?: string; is_error?: boolean };

export function storedTurns(messages: Message[]): StoredTurn[] {
  const byTurn = new Map<string, Message[]>();
  for (const m of messages) byTurn.set(m.turnId, [...(byTurn.get(m.turnId) ?? []), m]);
  return [...byTurn.entries()].map(([turnId, list]) => turnTiming(turnId, list));
}

function turnTiming(turnId: string, list: Message[]): StoredTurn {
  const at = (m: Message) => Date.parse(m.createdAt);
  const results = new Map<string, { at: number; isError: boolean }>();
  for (const m of list)
    for (const b of m.content as Block[])
      if (b.type === 'tool_result' && b.tool_use_id) results.set(b.tool_use_id, { at: at(m), isError: b.is_error === true });
  const rows: WaterfallRow[] = [];
  list.forEach((m, i) => {
    if (m.kind !== 'assistant' || i === 0) return;
    rows.push({ label: 'model call', start: at(list[i - 1]!), stop: at(m), cls: 'model' });
    for (const b of m.content as Block[]) {
      const r = b.type === 'tool_use' && b.id ? results.get(b.id) : undefined;
      if (r) rows.push({ label: b.name ?? 'tool', start: at(m), stop: r.at, cls: r.isError ? 'tool error' : 'tool' });
    }
  });
  return { turnId, startedAt: at(list[0]!), endedAt: at(list.at(-1)!), rows };
}
