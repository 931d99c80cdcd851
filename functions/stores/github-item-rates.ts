import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

const HOUR_MS = 3_600_000;

/** What counting one more run on an item says: go on, or the limit is reached (and whether this is the first refusal of the hour). */
export type RateAnswer = { allowed: true } | { allowed: false; firstRefusal: boolean };

/**
 * Runs per issue or pull request per clock hour, in DynamoDB. Each count is one conditional
 * update (`runs < limit`), so any number of concurrent deliveries let exactly `limit` through;
 * the first one refused in an hour is told so, so the comment saying so is posted once.
 */
export class GithubItemRateStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  async countRun(itemKey: string, limit: number, now: number): Promise<RateAnswer> {
    const hour = Math.floor(now / HOUR_MS);
    const key = { windowKey: `${itemKey}@${hour}` };
    // Kept an hour past its window: a clock a little behind still finds it.
    const ttl = Math.floor(((hour + 2) * HOUR_MS) / 1000);
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: key,
          UpdateExpression: 'ADD runs :one SET #ttl = :ttl',
          ConditionExpression: 'attribute_not_exists(runs) OR runs < :limit',
          ExpressionAttributeNames: { '#ttl': 'ttl' },
          ExpressionAttributeValues: { ':one': 1, ':ttl': ttl, ':limit': limit },
        }),
      );
      return { allowed: true };
    } catch (err) {
      if (!(err instanceof ConditionalCheckFailedException)) throw err;
    }
    return { allowed: false, firstRefusal: await this.markRefused(key) };
  }

  /** True for the first refusal of the window (a create-only flag). */
  private async markRefused(key: { windowKey: string }): Promise<boolean> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: key,
          UpdateExpression: 'SET refused = :yes',
          ConditionExpression: 'attribute_not_exists(refused)',
          ExpressionAttributeValues: { ':yes': true },
        }),
      );
      return true;
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return false;
      throw err;
    }
  }
}
