import { Fragment } from 'preact';
import { formatDuration } from '../format.ts';
import type { TurnState } from '../turn-state.ts';

/**
 * A waterfall of the turn's model calls and tool calls, timed in this browser as events arrived
 * (so it covers turns watched live), to show at a glance where a turn spent its time.
 */
export function Timeline({ turn, now }: { turn: TurnState; now: number }) {
  const end = turn.end?.at ?? now;
  const total = Math.max(1, end - turn.startedAt);
  const rows = turn.items.flatMap((item) => {
    if (item.kind === 'model') return [{ label: 'model call', start: item.startedAt, stop: item.endedAt, cls: 'model' }];
    if (item.kind === 'tool') return [{ label: item.name, start: item.startedAt, stop: item.endedAt ?? end, cls: item.isError ? 'tool error' : 'tool' }];
    return [];
  });
  if (rows.length === 0) return null;
  return (
    <figure class="panel" aria-label="Timeline of the turn">
      <figcaption class="muted">Timeline · {formatDuration(total)} in all</figcaption>
      <div class="waterfall">
        {rows.map((r, i) => (
          <Fragment key={i}>
            <span>{r.label} <span class="muted">{formatDuration(r.stop - r.start)}</span></span>
            <div class="track" role="img" aria-label={`${r.label} from ${formatDuration(r.start - turn.startedAt)} for ${formatDuration(r.stop - r.start)}`}>
              <div class={`span ${r.cls}`} style={{ left: `${((r.start - turn.startedAt) / total) * 100}%`, width: `${((r.stop - r.start) / total) * 100}%` }} />
            </div>
          </Fragment>
        ))}
      </div>
    </figure>
  );
}
