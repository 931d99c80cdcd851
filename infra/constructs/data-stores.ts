import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { TABLE_KEYS, TABLES, tableNames, type KeyDef, type TableKey, type TableNames, type TableSpec } from '../../functions/stores/tables.ts';
import { BUCKET_LAYOUT } from '../../functions/stores/bucket-layout.ts';
import { SHORT_LIVED_TAG } from '../../sandbox-runner/common/short-lived-tag.ts';
import type { StageConfig } from '../config/stages.ts';

export interface DataStoresProps {
  readonly stage: StageConfig;
}

/**
 * The tables (declared from the list in functions/stores/tables.ts, the same one the local stack
 * creates) and the bucket. On-demand billing, point-in-time recovery, and each table's TTL
 * attribute: items that should expire (events, pending approvals) carry it, others never do.
 */
export class DataStores extends Construct {
  readonly tables: Record<TableKey, dynamodb.TableV2>;
  readonly tableNames: TableNames;
  readonly bucket: s3.Bucket;

  constructor(scope: Construct, id: string, props: DataStoresProps) {
    super(scope, id);
    const { stage } = props;
    this.tableNames = tableNames(stage.prefix);
    const declare = (key: TableKey): dynamodb.TableV2 => {
      const spec: TableSpec = TABLES[key];
      return new dynamodb.TableV2(this, logicalId(key), {
        tableName: this.tableNames[key],
        partitionKey: attribute(spec.partitionKey),
        sortKey: spec.sortKey && attribute(spec.sortKey),
        billing: dynamodb.Billing.onDemand(),
        pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
        timeToLiveAttribute: spec.ttlAttribute,
        deletionProtection: stage.protectData,
        removalPolicy: stage.protectData ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
        globalSecondaryIndexes: spec.indexes?.map((index) => ({
          indexName: index.name,
          partitionKey: attribute(index.partitionKey),
          sortKey: index.sortKey && attribute(index.sortKey),
        })),
      });
    };
    this.tables = Object.fromEntries(TABLE_KEYS.map((key) => [key, declare(key)])) as Record<TableKey, dynamodb.TableV2>;

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
        // Staged archive uploads (imported or abandoned) and stop markers sit under each workspace's prefix; they carry this tag.
        { id: 'expire-short-lived', tagFilters: { [SHORT_LIVED_TAG.key]: SHORT_LIVED_TAG.value }, expiration: Duration.days(1) },
        {
          id: 'expire-old-versions',
          noncurrentVersionExpiration: Duration.days(stage.bucketLifecycle.noncurrentVersionsDays),
          expiredObjectDeleteMarker: true,
        },
        { id: 'abort-incomplete-uploads', abortIncompleteMultipartUploadAfter: Duration.days(1) },
      ],
    });
  }
}

function attribute(key: KeyDef): dynamodb.Attribute {
  return { name: key.name, type: key.type === 'S' ? dynamodb.AttributeType.STRING : dynamodb.AttributeType.NUMBER };
}

/** `sessions` → `SessionsTable`: stable logical ids whatever the stage. */
function logicalId(key: TableKey): string {
  return `${key.charAt(0).toUpperCase()}${key.slice(1)}Table`;
}
