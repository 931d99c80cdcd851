import { formatCost, formatTokens } from '../format.ts';
import type { TurnState } from '../turn-state.ts';
import { ToolCallView } from './tool-call.tsx';

/** The turn as it streams: text as it arrives, tool calls as they start and finish. */
export function LiveTurn({ turn, connection }: { turn: TurnState; connection: 'live' | 'reconnecting' }) {
  return (
    <section aria-label="Current turn" class="log">
      <p class="conn muted" aria-live="polite">
        {turn.end ? `Turn ended: ${turn.end.stopReason}` : connection === 'live' ? 'Streaming…' : 'Connection lost; reconnecting…'}
      </p>
      {turn.items.map((item, i) => {
        if (item.kind === 'text')
          return (
            <div key={i} class="assistant" data-streaming={item.streaming}>
              {item.text}
            </div>
          );
        if (item.kind === 'notice')
          return (
            <p key={i} class="notice">
              {item.text}
            </p>
          );
        if (item.kind === 'tool') {
          return <ToolCallView key={item.id} {...item} durationMs={item.endedAt !== undefined ? item.endedAt - item.startedAt : undefined} />;
        }
        return null;
      })}
      {turn.end && <TurnEnd end={turn.end} />}
    </section>
  );
}

function TurnEnd({ end }: { end: NonNullable<TurnState['end']> }) {
  return (
    <p class="turn-end" data-stop-reason={end.stopReason}>
      Stopped: <strong>{end.stopReason}</strong>
      {end.budget && ` (budget ${end.budget})`}
      {end.error && <span class="error"> — {end.error}</span>} · {formatTokens(end.usage)} · {formatCost(end.usage.costUsd)}
    </p>
  );
}
