import { createHash } from 'node:crypto';
import type { CreateScheduleCommandInput, SchedulerClient } from '@aws-sdk/client-scheduler';
import { z } from 'zod';
import type { LazyClient } from '../shared/lazy-client.ts';
import type { StratusConfig } from './config.ts';

/** What a question's timer delivers to the cron function when the question's time runs out. */
export const questionTimeoutEventSchema = z.object({ kind: z.literal('question_timeout'), sessionId: z.string() });

/**
 * Fires a question's timeout. In AWS a one-time EventBridge Scheduler schedule per question
 * (nothing runs, nothing is paid, while it waits; Scheduler deletes it once it fired); locally
 * the in-process scheduler's tick sweeps the approvals table instead, so arming does nothing.
 */
export interface QuestionTimers {
  arm(question: { sessionId: string; toolUseId: string; expiresAt: string }): Promise<void>;
}

export const POLLING_QUESTION_TIMERS: QuestionTimers = { async arm() {} };

type SchedulerTarget = NonNullable<StratusConfig['scheduler']>;

/** Scheduler names allow 64 characters of [0-9A-Za-z_.-]: a hash of the session and call ids fits any id. */
function timerName(sessionId: string, toolUseId: string): string {
  return `question-${createHash('sha256').update(`${sessionId}/${toolUseId}`).digest('hex').slice(0, 40)}`;
}

/**
 * The one-time schedule for a question: `at()` takes whole seconds in UTC; the time is rounded up
 * to the next minute, since Scheduler fires within the minute and a firing before `expiresAt`
 * would find nothing expired yet.
 */
export function toQuestionTimerRequest(
  question: { sessionId: string; toolUseId: string; expiresAt: string },
  target: SchedulerTarget,
): CreateScheduleCommandInput {
  const fireAt = Math.ceil(Date.parse(question.expiresAt) / 60_000) * 60_000;
  return {
    Name: timerName(question.sessionId, question.toolUseId),
    GroupName: target.groupName,
    ScheduleExpression: `at(${new Date(fireAt).toISOString().slice(0, 19)})`,
    ScheduleExpressionTimezone: 'UTC',
    FlexibleTimeWindow: { Mode: 'OFF' },
    ActionAfterCompletion: 'DELETE',
    Description: `Timeout of question ${question.toolUseId} in session ${question.sessionId}`.slice(0, 512),
    Target: {
      Arn: target.targetArn,
      RoleArn: target.roleArn,
      Input: JSON.stringify({ kind: 'question_timeout', sessionId: question.sessionId }),
      RetryPolicy: { MaximumRetryAttempts: 10, MaximumEventAgeInSeconds: 86_400 },
    },
  };
}

export function createEventBridgeQuestionTimers(scheduler: LazyClient<SchedulerClient>, target: SchedulerTarget): QuestionTimers {
  return {
    async arm(question) {
      const [{ ConflictException, CreateScheduleCommand }, client] = await Promise.all([import('@aws-sdk/client-scheduler'), scheduler()]);
      try {
        await client.send(new CreateScheduleCommand(toQuestionTimerRequest(question, target)));
      } catch (err) {
        // A replayed turn arms the same question again: its timer is already there.
        if (!(err instanceof ConflictException)) throw err;
      }
    },
  };
}
