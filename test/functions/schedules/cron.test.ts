import { describe, expect, it } from 'vitest';
import { nextRunAt, toEventBridgeExpression, validateSchedule } from '../../../functions/schedules/cron.ts';
import { toSchedulerRequest } from '../../../functions/schedules/schedule-backend.ts';

describe('cron expressions', () => {
  it.each([
    ['*/15 * * * *', 'cron(*/15 * * * ? *)'],
    ['0 9 * * 1-5', 'cron(0 9 ? * 2-6 *)'],
    ['30 2 1 * *', 'cron(30 2 1 * ? *)'],
    ['0 0 * * 0', 'cron(0 0 ? * 1 *)'],
    ['0 0 * * 7', 'cron(0 0 ? * 1 *)'],
    ['0 8 * * mon,fri', 'cron(0 8 ? * MON,FRI *)'],
    ['0 */2 * * 1/2', 'cron(0 */2 ? * 2/2 *)'],
  ])('%s becomes EventBridge %s', (cron, eb) => {
    expect(toEventBridgeExpression(cron)).toBe(eb);
  });

  it('refuses day-of-month and day-of-week together, with the reason', () => {
    expect(() => toEventBridgeExpression('0 0 1 * 1')).toThrow(
      'Invalid "cron": give either a day of the month or a day of the week, not both (the other must be "*").',
    );
  });

  it('validates field count, syntax and time zone with messages naming the field', async () => {
    await expect(validateSchedule('* * * *', 'UTC')).rejects.toThrow('Invalid "cron": expected 5 fields (minute hour day-of-month month day-of-week), got 4.');
    await expect(validateSchedule('61 * * * *', 'UTC')).rejects.toThrow(/^Invalid "cron": /);
    await expect(validateSchedule('0 * * * *', 'Mars/Olympus')).rejects.toThrow(
      'Invalid "timezone": "Mars/Olympus" is not an IANA time zone (e.g. "UTC", "Europe/Berlin").',
    );
    await expect(validateSchedule('0 9 * * 1-5', 'Europe/Berlin')).resolves.toBeUndefined();
  });

  it('refuses an expression no calendar date matches, and keeps the leap day', async () => {
    await expect(validateSchedule('0 9 31 4 *', 'UTC')).rejects.toThrow(
      'Invalid "cron": "0 9 31 4 *" never fires: no calendar date has that day of the month in that month (e.g. 30 February).',
    );
    await expect(validateSchedule('0 9 29 2 *', 'UTC')).resolves.toBeUndefined();
  });

  it("computes the next run in the schedule's time zone", async () => {
    const after = new Date('2026-03-02T07:30:00Z'); // a Monday
    expect((await nextRunAt('0 9 * * 1-5', 'Europe/Berlin', after))?.toISOString()).toBe('2026-03-02T08:00:00.000Z');
    expect((await nextRunAt('0 9 * * 1-5', 'UTC', after))?.toISOString()).toBe('2026-03-02T09:00:00.000Z');
  });

  it('builds the EventBridge Scheduler request from the record', () => {
    const request = toSchedulerRequest(
      {
        scheduleId: 'sch_1',
        tenantId: 't',
        name: 'nightly',
        cron: '0 3 * * *',
        timezone: 'Europe/Berlin',
        prompt: 'p',
        target: { newSession: {} },
        enabled: false,
        createdAt: '',
        updatedAt: '',
      },
      { groupName: 'stratus', targetArn: 'arn:aws:lambda:eu-central-1:1:function:cron', roleArn: 'arn:aws:iam::1:role/scheduler' },
    );
    expect(request).toMatchObject({
      Name: 'sch_1',
      GroupName: 'stratus',
      ScheduleExpression: 'cron(0 3 * * ? *)',
      ScheduleExpressionTimezone: 'Europe/Berlin',
      State: 'DISABLED',
      FlexibleTimeWindow: { Mode: 'OFF' },
      Target: { Arn: 'arn:aws:lambda:eu-central-1:1:function:cron', RoleArn: 'arn:aws:iam::1:role/scheduler' },
    });
    expect(JSON.parse(request.Target!.Input!)).toEqual({ kind: 'scheduled_task', scheduleId: 'sch_1', firedAt: '<aws.scheduler.scheduled-time>' });
  });
});
