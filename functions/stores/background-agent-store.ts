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
  /** Messages sent to it (SendMessage) while it runs: it takes them at its next model call, and cannot finish while any wait. */
  pendingMessages?: string[];
}

/** What a continued agent starts again with: running, no lease, no outcome, its spend counted afresh. */
export type ReopenedAgent = Pick<BackgroundAgentRecord, 'startedAt' | 'modelCalls' | 'usage' | 'toolUses'>;

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

  /**
   * A finished agent continued (SendMessage): running again with its spend counted from zero (the
   * last run's joined the session's usage with its notification). False when it runs already.
   */
  async reopen(id: string, fresh: ReopenedAgent): Promise<boolean> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { sessionId: id },
          UpdateExpression:
            'SET #status = :running, startedAt = :started, modelCalls = :calls, #usage = :usage, toolUses = :uses, updatedAt = :now REMOVE #result, notified, lease',
          ConditionExpression: 'attribute_exists(sessionId) AND #status <> :running',
          ExpressionAttributeNames: { '#status': 'status', '#usage': 'usage', '#result': 'result' },
          ExpressionAttributeValues: {
            ':running': 'running',
            ':started': fresh.startedAt,
            ':calls': fresh.modelCalls,
            ':usage': fresh.usage,
            ':uses': fresh.toolUses,
            ':now': new Date(fresh.startedAt).toISOString(),
          },
        }),
      );
      return true;
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return false;
      throw err;
    }
  }

  /** A message for the agent while it runs; false when it is not running (it finished meanwhile). */
  async queueMessage(id: string, text: string): Promise<boolean> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { sessionId: id },
          UpdateExpression: 'SET pendingMessages = list_append(if_not_exists(pendingMessages, :empty), :one)',
          ConditionExpression: '#status = :running',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':running': 'running', ':empty': [], ':one': [text] },
        }),
      );
      return true;
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return false;
      throw err;
    }
  }

  /** The messages waiting for it (oldest first); drop them with `dropMessages` once its log holds them. */
  async waitingMessages(id: string): Promise<string[]> {
    return (await this.get(id))?.pendingMessages ?? [];
  }

  /** Removes the first `count` waiting messages (its log holds them now), under its lease; later ones stay. */
  async dropMessages(id: string, owner: string, count: number): Promise<void> {
    if (count === 0) return;
    const paths = Array.from({ length: count }, (_, i) => `pendingMessages[${i}]`).join(', ');
    await this.updateHeld(id, owner, `SET updatedAt = :now REMOVE ${paths}`, {}, {});
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
        ':none': 0,
      },
      // A message sent while it ran is still to be answered: it may not finish before.
      '(attribute_not_exists(pendingMessages) OR size(pendingMessages) = :none)',
    );
  }

  /** Gives the lease up without an outcome (a hand-off to its next invocation). */
  async release(id: string, owner: string): Promise<void> {
    await this.updateHeld(id, owner, 'SET updatedAt = :now REMOVE lease', {}, {});
  }

  /** One update conditioned on `owner` holding the agent's lease; `:now` and `#owner`/`:owner` are supplied here. */
  private async updateHeld(
    id: string,
    owner: string,
    expression: string,
    names: Record<string, string>,
    values: Record<string, unknown>,
    condition?: string,
  ): Promise<void> {
    await this.db.send(
      new UpdateCommand({
        TableName: this.table,
        Key: { sessionId: id },
        UpdateExpression: expression,
        ConditionExpression: condition ? `lease.#owner = :owner AND ${condition}` : 'lease.#owner = :owner',
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
