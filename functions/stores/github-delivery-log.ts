import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { queryByTenant, type TenantPage } from './tenant-index.ts';

/**
 * What became of a delivery: `accepted` (handed to the worker, not decided yet), `ran` (a run
 * worked on it), `queued` (it joined the run already working on its item), `ignored` (it asks
 * for nothing, or is Stratus's own), `refused` (a sender who may not, a rate limit), `failed`.
 */
export type DeliveryDecision = 'accepted' | 'ran' | 'queued' | 'ignored' | 'refused' | 'failed';

export interface DeliveryLogRecord {
  deliveryId: string;
  tenantId: string;
  /** When it arrived: the listing's order. */
  createdAt: string;
  updatedAt: string;
  event: string;
  action?: string;
  repository: string;
  number?: number;
  sender?: string;
  decision: DeliveryDecision;
  reason?: string;
  runId?: string;
  /** The run's outcome as `GET /v1/github/runs` reports it. */
  outcome?: string;
  sessionId?: string;
  ttl: number;
}

/** Every delivery routed to a tenant and what was decided about it, kept `retentionDays` (table `githubDeliveryLog`). */
export class GithubDeliveryLog {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
    private readonly retentionDays: number,
  ) {}

  /** Records a delivery as it arrives; a redelivery of one recorded keeps the first entry. */
  async record(entry: Omit<DeliveryLogRecord, 'ttl' | 'updatedAt'>, now: number): Promise<void> {
    const item: DeliveryLogRecord = { ...entry, updatedAt: entry.createdAt, ttl: Math.floor(now / 1000) + this.retentionDays * 86_400 };
    try {
      await this.db.send(new PutCommand({ TableName: this.table, Item: item, ConditionExpression: 'attribute_not_exists(deliveryId)' }));
    } catch (err) {
      if (!(err instanceof ConditionalCheckFailedException)) throw err;
    }
  }

  /** What the worker decided about a delivery the log holds (nothing for one it does not: a run started by a queued message). */
  async decide(
    deliveryId: string,
    patch: Pick<DeliveryLogRecord, 'decision'> & Partial<Pick<DeliveryLogRecord, 'reason' | 'runId' | 'outcome' | 'sessionId'>>,
    now: number,
  ) {
    const entries = Object.entries({ ...patch, updatedAt: new Date(now).toISOString() }).filter(([, v]) => v !== undefined);
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { deliveryId },
          UpdateExpression: `SET ${entries.map((_, i) => `#f${i} = :v${i}`).join(', ')}`,
          ConditionExpression: 'attribute_exists(deliveryId)',
          ExpressionAttributeNames: Object.fromEntries(entries.map(([k], i) => [`#f${i}`, k])),
          ExpressionAttributeValues: Object.fromEntries(entries.map(([, v], i) => [`:v${i}`, v])),
        }),
      );
    } catch (err) {
      if (!(err instanceof ConditionalCheckFailedException)) throw err;
    }
  }

  async list(tenantId: string, opts: { limit: number; cursor?: string }): Promise<TenantPage<DeliveryLogRecord>> {
    return queryByTenant<DeliveryLogRecord>(this.db, this.table, 'deliveryId', tenantId, opts);
  }
}
