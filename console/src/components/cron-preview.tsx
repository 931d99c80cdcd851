import { Cron } from 'croner';

/** The next five firings of a five-field cron in a time zone, as the server's scheduler computes them (same library). */
export function nextFirings(cron: string, timezone: string): Date[] | string {
  if (cron.trim().split(/\s+/).length !== 5) return 'Five fields: minute hour day-of-month month day-of-week.';
  try {
    return new Cron(cron.trim(), { paused: true, timezone: timezone || 'UTC' }).nextRuns(5);
  } catch (err) {
    return (err as Error).message;
  }
}

export function CronPreview({ cron, timezone, id = 'cron-help' }: { cron: string; timezone: string; id?: string }) {
  const next = nextFirings(cron, timezone);
  if (typeof next === 'string')
    return (
      <p id={id} class="error" aria-live="polite">
        {next}
      </p>
    );
  const fmt = new Intl.DateTimeFormat('en', { dateStyle: 'medium', timeStyle: 'short', timeZone: timezone || 'UTC' });
  return (
    <div id={id} aria-live="polite">
      <span class="muted">Next firings ({timezone || 'UTC'}):</span>
      <ol>
        {next.map((d) => (
          <li key={d.toISOString()}>{fmt.format(d)}</li>
        ))}
      </ol>
    </div>
  );
}
