import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/**
 * What one issue (or pull request) has cost over every run and retrigger: the count its budgets
 * are checked against (functions/github/item-budget.ts). Kept in the threads table under
 * `item:<threadKey>`, beside the thread and never written by it, and changed only by atomic
 * updates, so concurrent and repeated deliveries can neither skip a count nor double one.
 */
export interface GithubItemRecord {
  itemKey: string;
  runs: number;
  costUsd: number;
  tokens: number;
  /** Raised by writers (a comment command or the API), on top of the repository's budgets. */
  raisedCostUsd?: number;
  raisedTokens?: number;
  raisedRuns?: number;
  /** Failing-check fixes: attempts made on this pull request, and the head commit of the last one. */
  checkAttempts?: number;
  checkSha?: string;
  /** Set once the comment saying the attempts are used up was asked for. */
  checkLimitNoted?: boolean;
  updatedAt?: string;
}

/** The limits a run must be under to start (absent: no limit of that kind). */
export interface ItemLimits {
  maxRuns?: number;
  maxCostUsd?: number;
  maxTokens?: number;
}

export interface ItemRaise {
  usd?: number;
  tokens?: number;
  runs?: number;
}

export type CheckAttempt = 'claimed' | 'same_commit' | 'limit_reached' | 'limit_noted';

const EMPTY = (itemKey: string): GithubItemRecord => ({ itemKey, runs: 0, costUsd: 0, tokens: 0 });

export function itemKeyOf(threadKey: string): string {
  return `item:${threadKey}`;
}

export class GithubItemStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  async get(itemKey: string): Promise<GithubItemRecord> {
    const out = await this.db.send(new GetCommand({ TableName: this.table, Key: { threadKey: itemKey }, ConsistentRead: true }));
    const item = out.Item as (GithubItemRecord & { threadKey: string }) | undefined;
    if (!item) return EMPTY(itemKey);
    const { threadKey: _key, ...rest } = item;
    return { ...EMPTY(itemKey), ...rest, itemKey };
  }

  /**
   * Counts one more run, only while every limit is unspent: a single conditional update, so two
   * deliveries racing for the last run cannot both have it. The limits include what writers
   * raised (raises only grow, so limits read a moment ago are never too generous). False when a
   * limit is spent.
   */
  async startRun(itemKey: string, limits: ItemLimits, now: string): Promise<boolean> {
    const conditions: string[] = [];
    const values: Record<string, unknown> = { ':one': 1, ':now': now };
    for (const [field, limit] of [
      ['runs', limits.maxRuns],
      ['costUsd', limits.maxCostUsd],
      ['tokens', limits.maxTokens],
    ] as const) {
      if (limit === undefined) continue;
      values[`:${field}`] = limit;
      conditions.push(`(attribute_not_exists(${field}) OR ${field} < :${field})`);
    }
    return this.conditional({
      Key: { threadKey: itemKey },
      UpdateExpression: 'ADD runs :one SET updatedAt = :now',
      ...(conditions.length ? { ConditionExpression: conditions.join(' AND ') } : {}),
      ExpressionAttributeValues: values,
    });
  }

  /** Adds what a run spent. */
  async addSpend(itemKey: string, spent: { usd: number; tokens: number }, now: string): Promise<void> {
    await this.db.send(
      new UpdateCommand({
        TableName: this.table,
        Key: { threadKey: itemKey },
        UpdateExpression: 'ADD costUsd :usd, tokens :tokens SET updatedAt = :now',
        ExpressionAttributeValues: { ':usd': spent.usd, ':tokens': spent.tokens, ':now': now },
      }),
    );
  }

  /** Raises the item's budgets by what a writer gave (added to earlier raises). */
  async raise(itemKey: string, by: ItemRaise, now: string): Promise<GithubItemRecord> {
    const adds = [
      ['raisedCostUsd', by.usd],
      ['raisedTokens', by.tokens],
      ['raisedRuns', by.runs],
    ].filter(([, v]) => v !== undefined) as [string, number][];
    await this.db.send(
      new UpdateCommand({
        TableName: this.table,
        Key: { threadKey: itemKey },
        UpdateExpression: `ADD ${adds.map(([k], i) => `${k} :v${i}`).join(', ')} SET updatedAt = :now`,
        ExpressionAttributeValues: { ...Object.fromEntries(adds.map(([, v], i) => [`:v${i}`, v])), ':now': now },
      }),
    );
    return this.get(itemKey);
  }

  /**
   * One attempt at fixing the failing checks of commit `sha`: claimed when it is a commit not
   * tried before and attempts are left; `same_commit` for another event about a commit already
   * tried (a check suite, its check runs and its workflow run all report one failure);
   * `limit_noted` the first time the attempts are found used up (the one comment saying so),
   * `limit_reached` after.
   */
  async claimCheckAttempt(itemKey: string, sha: string, maxAttempts: number, now: string): Promise<CheckAttempt> {
    const claimed = await this.conditional({
      Key: { threadKey: itemKey },
      UpdateExpression: 'ADD checkAttempts :one SET checkSha = :sha, updatedAt = :now',
      ConditionExpression: '(attribute_not_exists(checkSha) OR checkSha <> :sha) AND (attribute_not_exists(checkAttempts) OR checkAttempts < :max)',
      ExpressionAttributeValues: { ':one': 1, ':sha': sha, ':max': maxAttempts, ':now': now },
    });
    if (claimed) return 'claimed';
    const noted = await this.conditional({
      Key: { threadKey: itemKey },
      UpdateExpression: 'SET checkLimitNoted = :yes, updatedAt = :now',
      ConditionExpression: 'checkSha <> :sha AND attribute_not_exists(checkLimitNoted)',
      ExpressionAttributeValues: { ':yes': true, ':sha': sha, ':now': now },
    });
    if (noted) return 'limit_noted';
    return (await this.get(itemKey)).checkSha === sha ? 'same_commit' : 'limit_reached';
  }

  private async conditional(input: Omit<ConstructorParameters<typeof UpdateCommand>[0], 'TableName'>): Promise<boolean> {
    try {
      await this.db.send(new UpdateCommand({ TableName: this.table, ...input }));
      return true;
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return false;
      throw err;
    }
  }
}
