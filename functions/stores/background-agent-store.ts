import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { TextBlockParam } from '@anthropic-ai/sdk/resources/messages';
import type { UsageRecord } from './budgets.ts';
import { LEASE_IS_FREE, type Lease } from './session-store.ts';

export type BackgroundAgentStatus = 'running' | 'completed' | 'failed';

/**
 * A background sub-agent (`run_in_background`): its own lease, spend and outcome. The item
 * lives in the sessions table under its log's id (`{sessionId}/agents/{agentId}`), so the
 * session lease code (heartbeat, dead-lease rules) works on it unchanged; it has no `tenantId`,
 * so the tenant index never lists it. Its messages are its log, as for any sub-agent.
 */
export interface BackgroundAgentRecord {
  /** The log id: `{parentSessionId}/agents/{agentId}` (the table's key). */
  sessionId: string;
  parentSessionId: string;
  agentId: string;
  toolUseId: string;
  agentType: string;
  description: string;
  status: BackgroundAgentStatus;
  createdAt: string;
  updatedAt: string;
  /** When it was launched (epoch ms): its wall-clock budget and duration count from here. */
  startedAt: number;
  lease?: Lease;
  /** Its model calls and their usage so far (budgets; folded into the session with its notification). */
  modelCalls: number;
  usage: UsageRecord;
  toolUses: number;
  result?: { content: TextBlockParam[]; totalTokens: number; durationMs: number; error?: string };
  /** Set once its notification is in the parent's log. */
  notified?: boolean;
}

/** Background sub-agents' records: create-only, every later write conditional on the holder's lease. */
export class BackgroundAgentStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  /** Create-only: a replayed launch of the same call keeps the first record. */
  async create(record: BackgroundAgentRecord): Promise<void> {
    try {
      await this.db.send(new PutCommand({ TableName: this.table, Item: record, ConditionExpression: 'attribute_not_exists(sessionId)' }));
    } catch (err) {
      if (!(err instanceof ConditionalCheckFailedException)) throw err;
    }
  }

  async get(id: string): Promise<BackgroundAgentRecord | undefined> {
    const out = await this.db.send(new GetCommand({ TableName: this.table, Key: { sessionId: id }, ConsistentRead: true }));
    return out.Item as BackgroundAgentRecord | undefined;
  }

  /** Takes the agent's lease if it still runs and nobody live holds it; undefined otherwise (finished, or held). */
  async acquire(id: string, lease: Lease, now: number): Promise<BackgroundAgentRecord | undefined> {
    try {
      const out = await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { sessionId: id },
          UpdateExpression: 'SET lease = :lease, updatedAt = :now',
          ConditionExpression: `#status = :running AND ${LEASE_IS_FREE}`,
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':lease': lease, ':running': 'running', ':now': new Date(now).toISOString(), ':nowMs': now },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return out.Attributes as BackgroundAgentRecord;
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return undefined;
      throw err;
    }
  }

  /** Its spend after a model call, under its lease (fails if the lease was lost). */
  async recordSpend(id: string, owner: string, spend: Pick<BackgroundAgentRecord, 'modelCalls' | 'usage' | 'toolUses'>): Promise<void> {
    await this.updateHeld(
      id,
      owner,
      'SET modelCalls = :calls, #usage = :usage, toolUses = :uses, updatedAt = :now',
      { '#usage': 'usage' },
      {
        ':calls': spend.modelCalls,
        ':usage': spend.usage,
        ':uses': spend.toolUses,
      },
    );
  }

  /** Its outcome, and the lease given up, in one conditional write. */
  async finish(
    id: string,
    owner: string,
    status: Exclude<BackgroundAgentStatus, 'running'>,
    result: NonNullable<BackgroundAgentRecord['result']>,
  ): Promise<void> {
    await this.updateHeld(
      id,
      owner,
      'SET #status = :status, #result = :result, updatedAt = :now REMOVE lease',
      { '#status': 'status', '#result': 'result' },
      {
        ':status': status,
        ':result': result,
      },
    );
  }

  /** Gives the lease up without an outcome (a hand-off to its next invocation). */
  async release(id: string, owner: string): Promise<void> {
    await this.updateHeld(id, owner, 'SET updatedAt = :now REMOVE lease', {}, {});
  }

  /** One update conditioned on `owner` holding the agent's lease; `:now` and `#owner`/`:owner` are supplied here. */
  private async updateHeld(id: string, owner: string, expression: string, names: Record<string, string>, values: Record<string, unknown>): Promise<void> {
    await this.db.send(
      new UpdateCommand({
        TableName: this.table,
        Key: { sessionId: id },
        UpdateExpression: expression,
        ConditionExpression: 'lease.#owner = :owner',
        ExpressionAttributeNames: { ...names, '#owner': 'owner' },
        ExpressionAttributeValues: { ...values, ':owner': owner, ':now': new Date().toISOString() },
      }),
    );
  }

  async markNotified(id: string): Promise<void> {
    await this.db.send(
      new UpdateCommand({
        TableName: this.table,
        Key: { sessionId: id },
        UpdateExpression: 'SET notified = :yes',
        ConditionExpression: 'attribute_exists(sessionId)',
        ExpressionAttributeValues: { ':yes': true },
      }),
    );
  }
}
