import { GetCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { SetupSettings } from '../session-settings/setup-settings.ts';

/**
 * What a tenant sets for all of its sessions. Each field is optional and absent means "nothing
 * of the tenant's own"; more fields join as features need them (the API's zod schema in
 * functions/api/routes/tenant-settings.ts is where a new one is declared and bounded).
 */
export interface TenantSettings {
  /** Instructions every session of the tenant gets, before the project's own files (docs/context.md). */
  instructions?: string;
  /** Text appended to the system prompt of every session of the tenant, after the operator's. */
  systemPromptAppend?: string;
  /** The set-up every session of the tenant starts from; a session's or repository's own setting, or a repository's set-up file, wins (docs/environments.md). */
  setup?: SetupSettings;
}

export interface TenantSettingsRecord {
  tenantId: string;
  settings: TenantSettings;
  updatedAt: string;
}

/**
 * One item per tenant in the tenantSettings table. A PUT replaces the whole settings object
 * (last writer wins: there is one owner, the tenant's administrator); a tenant that never set
 * anything reads as `{}`.
 */
export class TenantSettingsStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  async get(tenantId: string): Promise<TenantSettingsRecord | undefined> {
    const out = await this.db.send(new GetCommand({ TableName: this.table, Key: { tenantId }, ConsistentRead: true }));
    return out.Item as TenantSettingsRecord | undefined;
  }

  /** The tenant's settings, `{}` when it has none. */
  async settingsOf(tenantId: string): Promise<TenantSettings> {
    return (await this.get(tenantId))?.settings ?? {};
  }

  async put(tenantId: string, settings: TenantSettings, now: number): Promise<TenantSettingsRecord> {
    // Stored as DynamoDB attributes: no undefined members.
    const record: TenantSettingsRecord = { tenantId, settings: JSON.parse(JSON.stringify(settings)) as TenantSettings, updatedAt: new Date(now).toISOString() };
    await this.db.send(new PutCommand({ TableName: this.table, Item: record }));
    return record;
  }
}
