import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { TABLE_KEYS, TABLES, TTL_ATTRIBUTE, tableEnvVar, tableNamesFromEnv } from '../../functions/stores/tables.ts';
import { synthStage, type Synthesized } from './synth-stack.ts';

describe('tables and bucket', () => {
  let dev: Synthesized;
  let prod: Synthesized;
  beforeAll(() => {
    dev = synthStage('dev');
    prod = synthStage('prod');
  });

  it('declares the tables of functions/stores/tables.ts with their keys and indexes', () => {
    const tables = prod.template.findResources('AWS::DynamoDB::GlobalTable');
    const sessions = tables[prod.id(prod.stack.data.tables.sessions)]!.Properties;
    expect(sessions.TableName).toBe('stratus-prod-sessions');
    expect(sessions.KeySchema).toEqual([{ AttributeName: TABLES.sessions.partitionKey.name, KeyType: 'HASH' }]);
    expect(sessions.GlobalSecondaryIndexes).toEqual([
      {
        IndexName: 'byTenant',
        KeySchema: [
          { AttributeName: 'tenantId', KeyType: 'HASH' },
          { AttributeName: 'createdAt', KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'ALL' },
      },
      {
        IndexName: 'byActivity',
        KeySchema: [
          { AttributeName: 'tenantId', KeyType: 'HASH' },
          { AttributeName: 'updatedAt', KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'ALL' },
      },
    ]);
    const messages = tables[prod.id(prod.stack.data.tables.messages)]!.Properties;
    expect(messages.KeySchema).toEqual([
      { AttributeName: TABLES.messages.partitionKey.name, KeyType: 'HASH' },
      { AttributeName: TABLES.messages.sortKey!.name, KeyType: 'RANGE' },
    ]);
  });

  it('declares every table of the list and hands each name to the API and cron functions, where the config reads it back', () => {
    const declared = Object.values(prod.template.findResources('AWS::DynamoDB::GlobalTable')).map((t) => t.Properties.TableName);
    expect(declared.sort()).toEqual(TABLE_KEYS.map((key) => `stratus-prod-${key}`).sort());
    const functions = Object.values(prod.template.findResources('AWS::Lambda::Function'));
    for (const name of ['stratus-prod-api', 'stratus-prod-cron']) {
      const env = functions.find((f) => f.Properties.FunctionName === name)!.Properties.Environment.Variables as Record<string, string>;
      for (const key of TABLE_KEYS) expect(env[tableEnvVar(key)]).toBe(`stratus-prod-${key}`);
      expect(tableNamesFromEnv(env)).toEqual(Object.fromEntries(TABLE_KEYS.map((key) => [key, `stratus-prod-${key}`])));
    }
  });

  it('bills on demand, keeps point-in-time recovery and expires items by the TTL attribute', () => {
    for (const s of [dev, prod]) {
      const tables = Object.values(s.template.findResources('AWS::DynamoDB::GlobalTable'));
      expect(tables).toHaveLength(TABLE_KEYS.length);
      for (const table of tables) {
        expect(table.Properties.BillingMode).toBe('PAY_PER_REQUEST');
        expect(table.Properties.TimeToLiveSpecification).toEqual({ AttributeName: TTL_ATTRIBUTE, Enabled: true });
        expect(table.Properties.Replicas).toEqual([expect.objectContaining({ PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true } })]);
      }
    }
  });

  it('protects production tables from deletion, and not dev ones', () => {
    const prodTables = Object.values(prod.template.findResources('AWS::DynamoDB::GlobalTable'));
    const devTables = Object.values(dev.template.findResources('AWS::DynamoDB::GlobalTable'));
    expect([prodTables.length, devTables.length]).toEqual([TABLE_KEYS.length, TABLE_KEYS.length]);
    expect(TABLE_KEYS.length).toBe(17);
    for (const table of prodTables) {
      expect(table.DeletionPolicy).toBe('Retain');
      expect(table.Properties.Replicas[0].DeletionProtectionEnabled).toBe(true);
    }
    for (const table of devTables) {
      expect(table.DeletionPolicy).toBe('Delete');
      expect(table.Properties.Replicas[0].DeletionProtectionEnabled).toBe(false);
    }
  });

  it('encrypts the bucket, blocks public access and keeps it', () => {
    const bucket = prod.template.findResources('AWS::S3::Bucket')[prod.id(prod.stack.data.bucket)]!;
    expect(bucket.DeletionPolicy).toBe('Retain');
    expect(bucket.Properties.BucketEncryption).toEqual({
      ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
    });
    expect(bucket.Properties.PublicAccessBlockConfiguration).toEqual({
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    });
    expect(bucket.Properties.VersioningConfiguration).toEqual({ Status: 'Enabled' });
  });

  it('refuses plain HTTP and TLS below 1.2', () => {
    prod.template.hasResourceProperties('AWS::S3::BucketPolicy', {
      Bucket: { Ref: prod.id(prod.stack.data.bucket) },
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Action: 's3:*', Principal: { AWS: '*' }, Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
          Match.objectLike({ Effect: 'Deny', Action: 's3:*', Principal: { AWS: '*' }, Condition: { NumericLessThan: { 's3:TlsVersion': 1.2 } } }),
        ]),
      },
    });
  });

  it('expires persisted tool results, old object versions (on the stage schedule) and short-lived uploads and stop markers (a day)', () => {
    for (const [s, toolResultsDays, versionsDays] of [
      [dev, 14, 3],
      [prod, 90, 30],
    ] as const) {
      const rules = s.template.findResources('AWS::S3::Bucket')[s.id(s.stack.data.bucket)]!.Properties.LifecycleConfiguration.Rules;
      expect(rules).toEqual([
        { Id: 'expire-tool-results', Prefix: 'tool-results/', ExpirationInDays: toolResultsDays, Status: 'Enabled' },
        // Staged uploads and stop markers (under each workspace's prefix) are matched by their tag.
        { Id: 'expire-short-lived', TagFilters: [{ Key: 'stratus-expiry', Value: '1d' }], ExpirationInDays: 1, Status: 'Enabled' },
        { Id: 'expire-old-versions', NoncurrentVersionExpiration: { NoncurrentDays: versionsDays }, ExpiredObjectDeleteMarker: true, Status: 'Enabled' },
        { Id: 'abort-incomplete-uploads', AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 }, Status: 'Enabled' },
      ]);
    }
  });
});
