import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, GetCommand, PutCommand, ScanCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { NotFoundError } from '../shared/errors.ts';
import { isId, showId } from '../shared/ids.ts';
import type { Budgets, UsageRecord } from './budgets.ts';
import { queryByTenant } from './tenant-index.ts';

export interface ScheduleRun {
  firedAt: string;
  sessionId?: string;
  turnId?: string;
  outcome: string;
  error?: string;
  /** With outcome `budget_exceeded`: which budget. */
  budget?: string;
  /** The turn's cost in USD (priced usage) and its tokens. */
  costUsd?: number;
  usage?: UsageRecord;
}

/** Firings kept per schedule (the oldest go first). */
export const MAX_SCHEDULE_RUNS = 50;

export interface ScheduleRecord {
  scheduleId: string;
  tenantId: string;
  name: string;
  cron: string;
  timezone: string;
  prompt: string;
  /** Run in this session each time, or in a new session per run (seeded with `files`). */
  target: { sessionId: string } | { newSession: { files?: Record<string, string | { base64: string }> } };
  enabled: boolean;
  createdAt: string;
  updatedAt: string;
  /** Epoch ms of the next firing (what the local scheduler polls; informational in AWS). */
  nextRunAt?: number;
  /** ISO time of the last firing claimed; a firing is claimed once even if delivered twice. */
  lastFiredAt?: string;
  lastRun?: ScheduleRun;
  /** The last MAX_SCHEDULE_RUNS firings, oldest first. */
  runs?: ScheduleRun[];
  /** Budgets of the sessions this schedule creates (over the tenant's defaults). */
  budgets?: Budgets;
  /** Made by an agent's CronCreate call (not through the API): which session's call. */
  createdBy?: ScheduleCreator;
  /** Fires once, then is deleted (CronCreate with `recurring: false`). */
  oneShot?: true;
  /** Epoch ms after which the schedule fires one last time and is deleted (an agent's recurring schedule ages out). */
  expiresAt?: number;
}

/** Who made an agent-made schedule: the session and the tool call. */
export interface ScheduleCreator {
  kind: 'agent';
  sessionId: string;
  toolUseId: string;
}

/**
 * Where schedules fire from: the armed copy of the records. In AWS each record becomes an
 * EventBridge Scheduler schedule that invokes the cron function (functions/schedules); locally
 * the in-process scheduler polls this store's records, so there is nothing to mirror.
 */
export interface ScheduleBackend {
  upsert(record: ScheduleRecord): Promise<void>;
  remove(scheduleId: string): Promise<void>;
}

/** Schedules in DynamoDB, the same records locally and in AWS. */
export class ScheduleStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  async put(record: ScheduleRecord): Promise<void> {
    await this.db.send(new PutCommand({ TableName: this.table, Item: record }));
  }

  async get(scheduleId: string): Promise<ScheduleRecord | undefined> {
    const out = await this.db.send(new GetCommand({ TableName: this.table, Key: { scheduleId }, ConsistentRead: true }));
    return out.Item as ScheduleRecord | undefined;
  }

  async getForTenant(scheduleId: string, tenantId: string): Promise<ScheduleRecord> {
    const record = isId('sch', scheduleId) ? await this.get(scheduleId) : undefined;
    if (!record || record.tenantId !== tenantId) throw new NotFoundError(`Schedule ${showId(scheduleId)} not found.`);
    return record;
  }

  async delete(scheduleId: string): Promise<void> {
    await this.db.send(new DeleteCommand({ TableName: this.table, Key: { scheduleId } }));
  }

  async listForTenant(tenantId: string, opts: { limit: number; cursor?: string }): Promise<{ schedules: ScheduleRecord[]; nextCursor?: string }> {
    const page = await queryByTenant<ScheduleRecord>(this.db, this.table, 'scheduleId', tenantId, opts);
    return { schedules: page.items, nextCursor: page.nextCursor };
  }

  /** Enabled schedules due by `now`. Used by the local scheduler; in AWS, EventBridge fires instead. */
  async listDue(now: number): Promise<ScheduleRecord[]> {
    const due: ScheduleRecord[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const out = await this.db.send(
        new ScanCommand({
          TableName: this.table,
          FilterExpression: 'enabled = :yes AND nextRunAt <= :now',
          ExpressionAttributeValues: { ':yes': true, ':now': now },
          ExclusiveStartKey: start,
        }),
      );
      due.push(...((out.Items ?? []) as ScheduleRecord[]));
      start = out.LastEvaluatedKey;
    } while (start);
    return due;
  }

  /**
   * Claims one firing (schedule, time) and moves nextRunAt on, with a conditional write, so a
   * firing delivered twice, or seen by two pollers, runs once. False when already claimed.
   */
  async claimFiring(scheduleId: string, firedAt: string, nextRunAt: number | undefined): Promise<boolean> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { scheduleId },
          UpdateExpression: nextRunAt === undefined ? 'SET lastFiredAt = :f REMOVE nextRunAt' : 'SET lastFiredAt = :f, nextRunAt = :n',
          ConditionExpression: 'attribute_exists(scheduleId) AND (attribute_not_exists(lastFiredAt) OR lastFiredAt < :f)',
          ExpressionAttributeValues: { ':f': firedAt, ...(nextRunAt === undefined ? {} : { ':n': nextRunAt }) },
        }),
      );
      return true;
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return false;
      throw err;
    }
  }

  /** Records a firing: `lastRun`, and the history (trimmed to MAX_SCHEDULE_RUNS). */
  async recordRun(scheduleId: string, run: ScheduleRun): Promise<void> {
    let length: number;
    try {
      const out = await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { scheduleId },
          UpdateExpression: 'SET lastRun = :r, runs = list_append(if_not_exists(runs, :empty), :one)',
          ConditionExpression: 'attribute_exists(scheduleId)',
          ExpressionAttributeValues: { ':r': run, ':empty': [], ':one': [run] },
          ReturnValues: 'UPDATED_NEW',
        }),
      );
      length = ((out.Attributes?.runs as unknown[] | undefined) ?? []).length;
    } catch (err) {
      // The schedule was deleted while it ran: nothing to record on.
      if (err instanceof ConditionalCheckFailedException) return;
      throw err;
    }
    const excess = length - MAX_SCHEDULE_RUNS;
    if (excess <= 0) return;
    // Drops the oldest, unless another firing changed the list meanwhile (the next one trims).
    await this.db
      .send(
        new UpdateCommand({
          TableName: this.table,
          Key: { scheduleId },
          UpdateExpression: `REMOVE ${Array.from({ length: excess }, (_, i) => `runs[${i}]`).join(', ')}`,
          ConditionExpression: 'size(runs) = :n',
          ExpressionAttributeValues: { ':n': length },
        }),
      )
      .catch((err: unknown) => {
        if (!(err instanceof ConditionalCheckFailedException)) throw err;
      });
  }
}
