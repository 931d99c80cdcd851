const DAY_NAMES = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const NUMBER = /^\d+$/;

/**
 * A five-field cron expression in words, as the reference's Cron tools print it ("Every 5
 * minutes", "Every day at 9:00 AM"); anything it has no words for comes back as the expression.
 * Agent-made schedules run in UTC, so times are printed as UTC wall-clock times whatever the host's zone.
 */
export function cronToHuman(cron: string): string {
  const parts = cron.trim().split(/\s+/);
  if (parts.length !== 5) return cron;
  const [minute, hour, dayOfMonth, month, dayOfWeek] = parts as [string, string, string, string, string];
  const everyDay = dayOfMonth === '*' && month === '*' && dayOfWeek === '*';
  const everyMinutes = /^\*\/(\d+)$/.exec(minute);
  if (everyMinutes && hour === '*' && everyDay) return everyMinutes[1] === '1' ? 'Every minute' : `Every ${Number(everyMinutes[1])} minutes`;
  if (NUMBER.test(minute) && hour === '*' && everyDay) return Number(minute) === 0 ? 'Every hour' : `Every hour at :${minute.padStart(2, '0')}`;
  const everyHours = /^\*\/(\d+)$/.exec(hour);
  if (NUMBER.test(minute) && everyHours && everyDay) {
    const suffix = Number(minute) === 0 ? '' : ` at :${minute.padStart(2, '0')}`;
    return Number(everyHours[1]) === 1 ? `Every hour${suffix}` : `Every ${Number(everyHours[1])} hours${suffix}`;
  }
  if (!NUMBER.test(minute) || !NUMBER.test(hour)) return cron;
  const time = clockTime(Number(minute), Number(hour));
  if (everyDay) return `Every day at ${time}`;
  if (dayOfMonth === '*' && month === '*' && /^\d$/.test(dayOfWeek)) return `Every ${DAY_NAMES[Number(dayOfWeek) % 7]} at ${time}`;
  if (dayOfMonth === '*' && month === '*' && dayOfWeek === '1-5') return `Weekdays at ${time}`;
  return cron;
}

function clockTime(minute: number, hour: number): string {
  return new Date(Date.UTC(2000, 0, 1, hour, minute)).toLocaleTimeString('en-US', { hour: 'numeric', minute: '2-digit', timeZone: 'UTC' });
}
