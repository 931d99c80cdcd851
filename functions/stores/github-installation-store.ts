import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, GetCommand, PutCommand, ScanCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import { decodeCursor, encodeCursor } from './cursor.ts';
import { eachOfTenant } from './tenant-index.ts';

/**
 * A GitHub App installation claimed by a tenant: only repositories in the repository list of an
 * installation the tenant claimed can be connected to it, and deliveries through the
 * installation reach only that tenant (docs/security.md, "Who may connect a repository").
 */
export interface GithubInstallationRecord {
  /** GitHub's numeric installation id, as a string (the key). */
  installationId: string;
  tenantId: string;
  /** The account (user or organisation) the App is installed on, when known. */
  account?: string;
  /** How the claim was made: an admin assigned it, or the App's setup flow with a signed state. */
  claimedBy: 'admin' | 'setup';
  createdAt: string;
}

const cursorShape = z.strictObject({ installationId: z.string().regex(/^\d{1,20}$/) });

/** Installation claims in DynamoDB: one item per installation, so it belongs to one tenant at most. */
export class GithubInstallationStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  /** Claims an installation for a tenant; the claim already held (by anyone) comes back instead. */
  async claim(record: GithubInstallationRecord): Promise<{ claimed: true } | { claimed: false; holder: GithubInstallationRecord | undefined }> {
    try {
      await this.db.send(new PutCommand({ TableName: this.table, Item: record, ConditionExpression: 'attribute_not_exists(installationId)' }));
      return { claimed: true };
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return { claimed: false, holder: await this.get(Number(record.installationId)) };
      throw err;
    }
  }

  async get(installationId: number): Promise<GithubInstallationRecord | undefined> {
    const out = await this.db.send(new GetCommand({ TableName: this.table, Key: { installationId: String(installationId) }, ConsistentRead: true }));
    return out.Item as GithubInstallationRecord | undefined;
  }

  /** The tenant's claim of `installationId`, or undefined when another tenant (or nobody) holds it. */
  async heldBy(installationId: number, tenantId: string): Promise<GithubInstallationRecord | undefined> {
    const record = await this.get(installationId);
    return record?.tenantId === tenantId ? record : undefined;
  }

  /** Every installation a tenant claimed (a handful: one per GitHub account the App is installed on). */
  async listForTenant(tenantId: string): Promise<GithubInstallationRecord[]> {
    const all: GithubInstallationRecord[] = [];
    for await (const record of eachOfTenant<GithubInstallationRecord>(this.db, this.table, 'installationId', tenantId)) all.push(record);
    return all;
  }

  /** Every claim, for the admin. A Scan: an admin operation over a small table. */
  async list(opts: { limit: number; cursor?: string }): Promise<{ items: GithubInstallationRecord[]; nextCursor: string | null }> {
    const out = await this.db.send(
      new ScanCommand({
        TableName: this.table,
        Limit: opts.limit,
        ...(opts.cursor ? { ExclusiveStartKey: decodeCursor(opts.cursor, cursorShape, {}) } : {}),
      }),
    );
    return { items: (out.Items ?? []) as GithubInstallationRecord[], nextCursor: out.LastEvaluatedKey ? encodeCursor(out.LastEvaluatedKey) : null };
  }

  /** Releases a claim; the released record, or undefined when none was held. */
  async release(installationId: number): Promise<GithubInstallationRecord | undefined> {
    const out = await this.db.send(new DeleteCommand({ TableName: this.table, Key: { installationId: String(installationId) }, ReturnValues: 'ALL_OLD' }));
    return out.Attributes as GithubInstallationRecord | undefined;
  }
}
