import { Fragment, type ComponentChildren } from 'preact';
import { formatDuration } from '../format.ts';
import type { TurnState } from '../turn-state.ts';

export interface WaterfallRow {
  label: string;
  start: number;
  stop: number;
  cls: string;
}

/**
 * A waterfall of the turn's model calls and tool calls, timed in this browser as events arrived
 * (so it covers turns watched live), to show at a glance where a turn spent its time.
 */
export function Timeline({ turn, now }: { turn: TurnState; now: number }) {
  const end = turn.end?.at ?? now;
  const rows = turn.items.flatMap((item) => {
    if (item.kind === 'model') return [{ label: 'model call', start: item.startedAt, stop: item.endedAt, cls: 'model' }];
    if (item.kind === 'tool') return [{ label: item.name, start: item.startedAt, stop: item.endedAt ?? end, cls: item.isError ? 'tool error' : 'tool' }];
    return [];
  });
  return <Waterfall label="Timeline of the turn" rows={rows} startedAt={turn.startedAt} endedAt={end} />;
}

/** The bars: each row placed by its start and length within the turn. */
export function Waterfall(p: { label: string; rows: WaterfallRow[]; startedAt: number; endedAt: number; caption?: ComponentChildren }) {
  const total = Math.max(1, p.endedAt - p.startedAt);
  if (p.rows.length === 0) return null;
  return (
    <figure class="panel" aria-label={p.label}>
      <figcaption class="muted">
        {p.caption ?? 'Timeline'} · {formatDuration(total)} in all
      </figcaption>
      <div class="waterfall">
        {p.rows.map((r, i) => (
          <Fragment key={i}>
            <span>
              {r.label} <span class="muted">{formatDuration(r.stop - r.start)}</span>
            </span>
            <div class="track" role="img" aria-label={`${r.label} from ${formatDuration(r.start - p.startedAt)} for ${formatDuration(r.stop - r.start)}`}>
              <div class={`span ${r.cls}`} style={{ left: `${((r.start - p.startedAt) / total) * 100}%`, width: `${((r.stop - r.start) / total) * 100}%` }} />
            </div>
          </Fragment>
        ))}
      </div>
    </figure>
  );
}
