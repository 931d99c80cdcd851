import { UserError } from '../shared/errors.ts';

/**
 * Schedules use standard five-field cron (`minute hour day-of-month month day-of-week`) in an
 * IANA time zone. Locally croner computes the next run; in AWS the same expression is
 * translated into EventBridge Scheduler's six-field `cron(...)` form. croner is loaded on first
 * use: only schedule requests and firings need it, not a cold start (docs/deploy.md, "Cold start
 * and bundle size").
 */
export async function nextRunAt(expression: string, timezone: string, after: Date): Promise<Date | undefined> {
  const { Cron } = await import('croner');
  return new Cron(expression, { paused: true, timezone }).nextRun(after) ?? undefined;
}

/** Throws (rejects with) a UserError naming what is wrong with the expression or time zone. */
export async function validateSchedule(expression: string, timezone: string): Promise<void> {
  const fields = expression.trim().split(/\s+/);
  if (fields.length !== 5) {
    throw new UserError(`Invalid "cron": expected 5 fields (minute hour day-of-month month day-of-week), got ${fields.length}.`);
  }
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
  } catch {
    throw new UserError(`Invalid "timezone": "${timezone}" is not an IANA time zone (e.g. "UTC", "Europe/Berlin").`);
  }
  const { Cron } = await import('croner');
  let cron: InstanceType<typeof Cron>;
  try {
    cron = new Cron(expression, { paused: true, timezone });
  } catch (err) {
    throw new UserError(`Invalid "cron": ${err instanceof Error ? err.message : String(err)}`);
  }
  toEventBridgeExpression(expression);
  // Five fields have no year, so an expression with no next run has none ever (30 February):
  // stored, it would sit enabled with nextRunAt null and never say why.
  if (!cron.nextRun()) {
    throw new UserError(`Invalid "cron": "${expression}" never fires: no calendar date has that day of the month in that month (e.g. 30 February).`);
  }
}

const DOW_NAMES = /^[A-Za-z]{3}$/;

/**
 * `*\/15 9-17 * * MON-FRI` → `cron(*\/15 9-17 ? * MON-FRI *)`. EventBridge wants `?` in one of
 * the day fields and numbers days of the week 1–7 from Sunday (cron: 0–6 from Sunday).
 */
export function toEventBridgeExpression(expression: string): string {
  const [minute, hour, dom, month, dow] = expression.trim().split(/\s+/) as [string, string, string, string, string];
  const domAny = dom === '*' || dom === '?';
  const dowAny = dow === '*' || dow === '?';
  if (!domAny && !dowAny) {
    throw new UserError('Invalid "cron": give either a day of the month or a day of the week, not both (the other must be "*").');
  }
  const ebDom = dowAny ? (domAny ? '*' : dom) : '?';
  const ebDow = dowAny ? '?' : shiftDaysOfWeek(dow);
  return `cron(${minute} ${hour} ${ebDom} ${month} ${ebDow} *)`;
}

function shiftDaysOfWeek(field: string): string {
  return field
    .replace(/(?<![/#\w])(\d+)/g, (digits) => {
      const n = Number(digits);
      if (n < 0 || n > 7) throw new UserError(`Invalid "cron": day of week ${n} is out of range 0-7.`);
      return String((n % 7) + 1);
    })
    .replace(/[A-Za-z]+/g, (name) => {
      if (!DOW_NAMES.test(name)) throw new UserError(`Invalid "cron": unknown day of week "${name}".`);
      return name.toUpperCase();
    });
}
