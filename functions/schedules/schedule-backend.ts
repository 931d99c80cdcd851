import type { CreateScheduleCommandInput, SchedulerClient } from '@aws-sdk/client-scheduler';
import type { LazyClient } from '../shared/lazy-client.ts';
import type { ScheduleBackend, ScheduleRecord } from '../stores/schedule-store.ts';
import { toEventBridgeExpression } from './cron.ts';

/** Locally the in-process scheduler polls the records: nothing to mirror. */
export const POLLING_SCHEDULE_BACKEND: ScheduleBackend = {
  async upsert() {},
  async remove() {},
};

export interface EventBridgeTarget {
  groupName: string;
  /** The cron function's ARN. */
  targetArn: string;
  /** The role EventBridge Scheduler assumes to invoke it. */
  roleArn: string;
}

/** The Scheduler request for a record: the same expression, time zone and on/off state. */
export function toSchedulerRequest(record: ScheduleRecord, target: EventBridgeTarget): CreateScheduleCommandInput {
  return {
    Name: record.scheduleId,
    GroupName: target.groupName,
    ScheduleExpression: toEventBridgeExpression(record.cron),
    ScheduleExpressionTimezone: record.timezone,
    FlexibleTimeWindow: { Mode: 'OFF' },
    State: record.enabled ? 'ENABLED' : 'DISABLED',
    Description: record.name.slice(0, 512),
    Target: {
      Arn: target.targetArn,
      RoleArn: target.roleArn,
      // Scheduler fills in the firing time, which makes each firing idempotent downstream.
      Input: JSON.stringify({ kind: 'scheduled_task', scheduleId: record.scheduleId, firedAt: '<aws.scheduler.scheduled-time>' }),
      RetryPolicy: { MaximumRetryAttempts: 2, MaximumEventAgeInSeconds: 3600 },
    },
  };
}

export function createEventBridgeScheduleBackend(scheduler: LazyClient<SchedulerClient>, target: EventBridgeTarget): ScheduleBackend {
  return {
    async upsert(record) {
      const request = toSchedulerRequest(record, target);
      const [{ CreateScheduleCommand, ResourceNotFoundException, UpdateScheduleCommand }, client] = await Promise.all([
        import('@aws-sdk/client-scheduler'),
        scheduler(),
      ]);
      try {
        await client.send(new UpdateScheduleCommand(request));
      } catch (err) {
        if (!(err instanceof ResourceNotFoundException)) throw err;
        await client.send(new CreateScheduleCommand(request));
      }
    },
    async remove(scheduleId) {
      const [{ DeleteScheduleCommand, ResourceNotFoundException }, client] = await Promise.all([import('@aws-sdk/client-scheduler'), scheduler()]);
      try {
        await client.send(new DeleteScheduleCommand({ Name: scheduleId, GroupName: target.groupName }));
      } catch (err) {
        if (!(err instanceof ResourceNotFoundException)) throw err;
      }
    },
  };
}
