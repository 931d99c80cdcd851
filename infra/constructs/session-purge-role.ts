import { Duration } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { BUCKET_LAYOUT } from '../../functions/stores/bucket-layout.ts';

/** The prefix families a session's objects live under (functions/runner-client/purge-credentials.ts). */
export const PURGED_PREFIXES = [BUCKET_LAYOUT.toolResults, BUCKET_LAYOUT.spill, BUCKET_LAYOUT.workspaces] as const;

/**
 * The only role that may list and delete in the bucket, every object version included: the API
 * function assumes it to purge one deleted session, with a session policy naming that session's
 * prefixes (functions/runner-client/purge-credentials.ts). The functions' own roles only read
 * and write, so no other path can remove data, and a deleted session leaves no noncurrent
 * version behind.
 */
export class SessionPurgeRole extends Construct {
  readonly role: iam.Role;

  constructor(scope: Construct, id: string, props: { bucket: s3.IBucket; roleName: string; trustedBy: iam.IRole }) {
    super(scope, id);
    this.role = new iam.Role(this, 'Role', {
      roleName: props.roleName,
      assumedBy: new iam.ArnPrincipal(props.trustedBy.roleArn),
      maxSessionDuration: Duration.hours(1),
      description: 'Assumed by the API function, with a per-session session policy, to purge a deleted session.',
    });
    this.role.addToPolicy(
      new iam.PolicyStatement({
        actions: ['s3:ListBucket', 's3:ListBucketVersions'],
        resources: [props.bucket.bucketArn],
        conditions: { StringLike: { 's3:prefix': PURGED_PREFIXES.map((p) => `${p}*`) } },
      }),
    );
    this.role.addToPolicy(
      new iam.PolicyStatement({
        actions: ['s3:DeleteObject', 's3:DeleteObjectVersion'],
        resources: PURGED_PREFIXES.map((p) => props.bucket.arnForObjects(`${p}*`)),
      }),
    );
    props.trustedBy.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['sts:AssumeRole'], resources: [this.role.roleArn] }));
  }
}
