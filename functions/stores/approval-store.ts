import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { deletePartition } from './delete-partition.ts';
import { DeleteCommand, GetCommand, PutCommand, QueryCommand, ScanCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ConflictError, NotFoundError } from '../shared/errors.ts';

/**
 * A tool call left waiting when its turn ended: it asked for permission (`ask`), it waits for a
 * person's input (`question`: AskUserQuestion; `plan`: ExitPlanMode's plan to approve), or it
 * came after one of those (`deferred`, runs after the answers without needing one itself). A
 * question or plan that was closed stays as `answered` (never listed) so that a second answer is
 * told it came too late.
 */
export interface PendingApproval {
  sessionId: string;
  toolUseId: string;
  turnId: string;
  /** Position among the waiting calls: they run in this order when the turn resumes. */
  order: number;
  toolName: string;
  input: unknown;
  kind: 'ask' | 'deferred' | InteractionKind | 'answered';
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
  /** A question: when it goes on without an answer. */
  expiresAt?: string;
  /** A question closed without an answer (its time ran out). */
  timedOut?: boolean;
}

/** The kinds of pending interaction a tool can wait in (Tool['interaction']). */
export type InteractionKind = 'question' | 'plan';

/** A call that waits for a person: a permission ask, a question or a plan, not answered yet. */
export function waitsForPerson(p: PendingApproval): boolean {
  return (p.kind === 'ask' || p.kind === 'question' || p.kind === 'plan') && p.decision === undefined;
}

/**
 * What closes a question or a plan: the input it runs with (the answers, the approved plan),
 * its time running out (questions), or a rejection with the person's words (plans).
 */
export interface QuestionClose {
  updatedInput?: unknown;
  decidedAt: string;
  timedOut?: boolean;
  /** A plan: `deny` rejects it (the call then gets the rejection text, with `feedback`). */
  decision?: 'allow' | 'deny';
  feedback?: string;
}

export class QuestionAlreadyAnsweredError extends ConflictError {
  constructor(toolUseId: string) {
    super(`Question ${toolUseId} already has an answer (or its time ran out).`, 'already_answered');
  }
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
      // Answered questions are kept only to tell a late second answer apart from an unknown id.
      items.push(...((out.Items ?? []) as PendingApproval[]).filter((item) => item.kind !== 'answered'));
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

  /**
   * The sessions with a question whose time ran out, or a question or plan closed whose turn has
   * not taken it yet (a resume in progress, or one that failed to start). A scan: the table holds only what
   * waits, plus answered questions until their session goes.
   */
  async sessionsWithQuestionsToResume(now: number): Promise<string[]> {
    const sessions = new Set<string>();
    let start: Record<string, unknown> | undefined;
    do {
      const out = await this.db.send(
        new ScanCommand({
          TableName: this.table,
          FilterExpression: '(kind = :q AND (expiresAt <= :now OR attribute_exists(decision))) OR (kind = :p AND attribute_exists(decision))',
          ExpressionAttributeValues: { ':q': 'question', ':p': 'plan', ':now': new Date(now).toISOString() },
          ProjectionExpression: 'sessionId',
          ConsistentRead: true,
          ExclusiveStartKey: start,
        }),
      );
      for (const item of out.Items ?? []) sessions.add(String(item.sessionId));
      start = out.LastEvaluatedKey;
    } while (start);
    return [...sessions];
  }

  /** One item as stored (an answered question included), or undefined. */
  async get(sessionId: string, toolUseId: string): Promise<PendingApproval | undefined> {
    const out = await this.db.send(new GetCommand({ TableName: this.table, Key: { sessionId, toolUseId }, ConsistentRead: true }));
    return out.Item as PendingApproval | undefined;
  }

  /**
   * Closes a waiting question (an answer, or its time ran out) or plan (approved or rejected);
   * 404 if no such interaction waits, 409 if it was closed already. One conditional write, so one
   * answer wins whichever instance gets several.
   */
  async closeQuestion(sessionId: string, toolUseId: string, close: QuestionClose, kind: InteractionKind = 'question'): Promise<PendingApproval> {
    const sets = ['decision = :d', 'decidedAt = :at', 'timedOut = :t'];
    if (close.updatedInput !== undefined) sets.push('updatedInput = :u');
    if (close.feedback !== undefined) sets.push('feedback = :f');
    try {
      const out = await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { sessionId, toolUseId },
          UpdateExpression: `SET ${sets.join(', ')}`,
          ConditionExpression: 'attribute_exists(toolUseId) AND kind = :q AND attribute_not_exists(decision)',
          ExpressionAttributeValues: {
            ':d': close.decision ?? 'allow',
            ':at': close.decidedAt,
            ':t': close.timedOut === true,
            ':q': kind,
            ...(close.updatedInput === undefined ? {} : { ':u': close.updatedInput }),
            ...(close.feedback === undefined ? {} : { ':f': close.feedback }),
          },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return out.Attributes as PendingApproval;
    } catch (err) {
      if (!(err instanceof ConditionalCheckFailedException)) throw err;
      const item = await this.get(sessionId, toolUseId);
      if (item?.kind !== kind && item?.kind !== 'answered') throw new NotFoundError(`No ${kind} ${toolUseId} waits for an answer in session ${sessionId}.`);
      throw new QuestionAlreadyAnsweredError(toolUseId);
    }
  }

  /** A question or plan whose answer the resumed turn took: kept, never listed, so a later answer gets a 409. */
  async retireQuestion(sessionId: string, toolUseId: string): Promise<void> {
    await this.db.send(
      new UpdateCommand({
        TableName: this.table,
        Key: { sessionId, toolUseId },
        UpdateExpression: 'SET kind = :a',
        ExpressionAttributeValues: { ':a': 'answered' },
      }),
    );
  }

  async remove(sessionId: string, toolUseId: string): Promise<void> {
    await this.db.send(new DeleteCommand({ TableName: this.table, Key: { sessionId, toolUseId } }));
  }
}
