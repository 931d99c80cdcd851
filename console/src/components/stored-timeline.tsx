import { useState } from 'preact/hooks';
import type { Message } from '../api.ts';
import { storedTurns } from '../stored-timing.ts';
import { Waterfall } from './timeline.tsx';

/** The waterfall of a turn loaded from the log (the newest by default; any other can be chosen). */
export function StoredTimeline({ messages }: { messages: Message[] }) {
  const turns = storedTurns(messages).filter((t) => t.rows.length > 0);
  const [chosen, setChosen] = useState<string | null>(null);
  const turn = turns.find((t) => t.turnId === chosen) ?? turns.at(-1);
  if (!turn) return null;
  const index = turns.indexOf(turn);
  const caption = (
    <>
      Timeline of turn{' '}
      <select aria-label="Turn shown in the timeline" style="width:auto;padding:2px 6px" value={turn.turnId} onChange={(e) => setChosen(e.currentTarget.value)}>
        {turns.map((t, i) => (
          <option key={t.turnId} value={t.turnId}>
            {i + 1} of {turns.length} ({new Date(t.startedAt).toLocaleTimeString()})
          </option>
        ))}
      </select>{' '}
      (from the stored log: when each answer and result was stored)
    </>
  );
  return <Waterfall key={index} label="Timeline of a stored turn" rows={turn.rows} startedAt={turn.startedAt} endedAt={turn.endedAt} caption={caption} />;
}
