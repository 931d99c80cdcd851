import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { TTL_ATTRIBUTE, tableSpecs, type KeyDef, type TableNames } from '../../functions/stores/tables.ts';
import { BUCKET_LAYOUT } from '../../functions/stores/bucket-layout.ts';
import type { StageConfig } from '../config/stages.ts';

export interface DataStoresProps {
  readonly stage: StageConfig;
}

/**
 * The tables (declared from functions/stores/tables.ts, the same description the local stack
 * creates) and the bucket. On-demand billing, point-in-time recovery, and a TTL attribute on
 * every table: items that should expire (events, pending approvals) carry it, others never do.
 */
export class DataStores extends Construct {
  readonly tables: Record<keyof TableNames, dynamodb.TableV2>;
  readonly tableNames: TableNames;
  readonly bucket: s3.Bucket;

  constructor(scope: Construct, id: string, props: DataStoresProps) {
    super(scope, id);
    const { stage } = props;
    this.tableNames = {
      sessions: `${stage.prefix}-sessions`,
      messages: `${stage.prefix}-messages`,
      events: `${stage.prefix}-events`,
      schedules: `${stage.prefix}-schedules`,
      approvals: `${stage.prefix}-approvals`,
    };
    const byName = new Map<string, dynamodb.TableV2>();
    for (const [tableName, spec] of tableSpecs(this.tableNames)) {
      const table = new dynamodb.TableV2(this, logicalId(tableName, stage.prefix), {
        tableName,
        partitionKey: attribute(spec.partitionKey),
        sortKey: spec.sortKey && attribute(spec.sortKey),
        billing: dynamodb.Billing.onDemand(),
        pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
        timeToLiveAttribute: TTL_ATTRIBUTE,
        deletionProtection: stage.protectData,
        removalPolicy: stage.protectData ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
        globalSecondaryIndexes: spec.indexes?.map((index) => ({
          indexName: index.name,
          partitionKey: attribute(index.partitionKey),
          sortKey: index.sortKey && attribute(index.sortKey),
        })),
      });
      byName.set(tableName, table);
    }
    const table = (key: keyof TableNames) => byName.get(this.tableNames[key])!;
    this.tables = {
      sessions: table('sessions'),
      messages: table('messages'),
      events: table('events'),
      schedules: table('schedules'),
      approvals: table('approvals'),
    };

    this.bucket = new s3.Bucket(this, 'Bucket', {
      encryption: s3.BucketEncryption.S3_MANAGED,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      minimumTLSVersion: 1.2,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      // Workspace objects are create-only; versioning keeps what a GC or a bug removes for a while.
      versioned: true,
      // Workspaces are user data: never deleted with the stack (teardown empties the bucket by hand).
      removalPolicy: RemovalPolicy.RETAIN,
      lifecycleRules: [
        { id: 'expire-tool-results', prefix: BUCKET_LAYOUT.toolResults, expiration: Duration.days(stage.bucketLifecycle.toolResultsDays) },
        { id: 'expire-old-versions', noncurrentVersionExpiration: Duration.days(stage.bucketLifecycle.noncurrentVersionsDays), expiredObjectDeleteMarker: true },
        { id: 'abort-incomplete-uploads', abortIncompleteMultipartUploadAfter: Duration.days(1) },
      ],
    });
  }
}

function attribute(key: KeyDef): dynamodb.Attribute {
  return { name: key.name, type: key.type === 'S' ? dynamodb.AttributeType.STRING : dynamodb.AttributeType.NUMBER };
}

/** `stratus-dev-sessions` → `SessionsTable`: stable logical ids whatever the stage. */
function logicalId(tableName: string, prefix: string): string {
  const base = tableName.slice(prefix.length + 1);
  return `${base.charAt(0).toUpperCase()}${base.slice(1)}Table`;
}
