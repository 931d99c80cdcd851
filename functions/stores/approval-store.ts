import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { deletePartition } from './delete-partition.ts';
import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ConflictError, NotFoundError } from '../shared/errors.ts';

/**
 * A tool call left waiting when its turn ended: either it asked for permission (`ask`) or it
 * came after one that did (`deferred`, runs after the answers without needing one itself).
 */
export interface PendingApproval {
  sessionId: string;
  toolUseId: string;
  turnId: string;
  /** Position among the waiting calls: they run in this order when the turn resumes. */
  order: number;
  toolName: string;
  input: unknown;
  kind: 'ask' | 'deferred';
  /** Why the call needs an answer (shown to the person). */
  message?: string;
  createdAt: string;
  decision?: 'allow' | 'deny';
  updatedInput?: unknown;
  remember?: boolean;
  /** With a remembered allow: the permission rule to keep (otherwise the call's own, see ruleToRemember). */
  rememberRule?: string;
  /** With a deny: what the person told the model (deny-with-feedback). */
  feedback?: string;
  decidedAt?: string;
}

export class ApprovalAlreadyDecidedError extends ConflictError {
  constructor(toolUseId: string) {
    super(`Tool call ${toolUseId} already has an answer.`, 'already_decided');
  }
}

/**
 * Pending approvals in DynamoDB. Written create-only by the turn that ends waiting; answered
 * with a conditional update (one answer per call, whichever instance receives it); deleted by
 * the turn that runs the calls once their results are in the log.
 */
export class ApprovalStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  async put(approval: PendingApproval): Promise<void> {
    try {
      await this.db.send(new PutCommand({ TableName: this.table, Item: approval, ConditionExpression: 'attribute_not_exists(toolUseId)' }));
    } catch (err) {
      // A replayed write of the same call is harmless.
      if (!(err instanceof ConditionalCheckFailedException)) throw err;
    }
  }

  /** Every waiting call of a session (DELETE). */
  async deleteAll(sessionId: string): Promise<number> {
    return deletePartition(this.db, this.table, { partition: 'sessionId', sort: 'toolUseId' }, sessionId);
  }

  async listForSession(sessionId: string): Promise<PendingApproval[]> {
    const items: PendingApproval[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const out = await this.db.send(
        new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: 'sessionId = :s',
          ExpressionAttributeValues: { ':s': sessionId },
          ConsistentRead: true,
          ExclusiveStartKey: start,
        }),
      );
      items.push(...((out.Items ?? []) as PendingApproval[]));
      start = out.LastEvaluatedKey;
    } while (start);
    return items.sort((a, b) => a.order - b.order);
  }

  /** Records a person's answer; 404 if the call is not waiting for one, 409 if it has one. */
  async decide(
    sessionId: string,
    toolUseId: string,
    answer: { decision: 'allow' | 'deny'; updatedInput?: unknown; remember?: boolean; rememberRule?: string; feedback?: string; decidedAt: string },
  ): Promise<PendingApproval> {
    try {
      const out = await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { sessionId, toolUseId },
          UpdateExpression: `SET decision = :d, decidedAt = :at, remember = :r${answer.updatedInput === undefined ? '' : ', updatedInput = :u'}${answer.feedback === undefined ? '' : ', feedback = :f'}${answer.rememberRule === undefined ? '' : ', rememberRule = :rr'}`,
          ConditionExpression: 'attribute_exists(toolUseId) AND kind = :ask AND attribute_not_exists(decision)',
          ExpressionAttributeValues: {
            ':d': answer.decision,
            ':at': answer.decidedAt,
            ':r': answer.remember ?? false,
            ':ask': 'ask',
            ...(answer.updatedInput === undefined ? {} : { ':u': answer.updatedInput }),
            ...(answer.feedback === undefined ? {} : { ':f': answer.feedback }),
            ...(answer.rememberRule === undefined ? {} : { ':rr': answer.rememberRule }),
          },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return out.Attributes as PendingApproval;
    } catch (err) {
      if (!(err instanceof ConditionalCheckFailedException)) throw err;
      const current = await this.db.send(new GetCommand({ TableName: this.table, Key: { sessionId, toolUseId }, ConsistentRead: true }));
      const item = current.Item as PendingApproval | undefined;
      if (item?.kind !== 'ask') throw new NotFoundError(`No tool call ${toolUseId} is waiting for permission in session ${sessionId}.`);
      throw new ApprovalAlreadyDecidedError(toolUseId);
    }
  }

  async remove(sessionId: string, toolUseId: string): Promise<void> {
    await this.db.send(new DeleteCommand({ TableName: this.table, Key: { sessionId, toolUseId } }));
  }
}
