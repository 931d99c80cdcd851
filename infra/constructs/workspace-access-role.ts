import { Duration } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { BUCKET_LAYOUT } from '../../functions/stores/bucket-layout.ts';

/**
 * The only role whose policy reaches workspace objects. Nothing runs as it directly: the API
 * and cron functions assume it with an inline session policy naming one workspace
 * (functions/runner-client/sts-credentials.ts) and hand the result to the runner, whose own
 * role has no S3 access at all.
 */
export class WorkspaceAccessRole extends Construct {
  readonly role: iam.Role;

  constructor(scope: Construct, id: string, props: { bucket: s3.IBucket; roleName: string; trustedBy: iam.IRole[] }) {
    super(scope, id);
    // Trusted by these roles' ARNs only, not by the account: no other principal can mint workspace credentials.
    this.role = new iam.Role(this, 'Role', {
      roleName: props.roleName,
      assumedBy: new iam.CompositePrincipal(...props.trustedBy.map((role) => new iam.ArnPrincipal(role.roleArn))),
      maxSessionDuration: Duration.hours(1),
      description: 'Assumed with a per-workspace session policy; credentials go to the sandbox runner.',
    });
    const prefix = BUCKET_LAYOUT.workspaces;
    // Cached environment layers too: session policies narrow them to one layer (runner) or one
    // repository's folder (the API side dropping layers): sandbox-runner/common/environment-policy.ts.
    const layers = BUCKET_LAYOUT.environments;
    this.role.addToPolicy(
      new iam.PolicyStatement({
        actions: ['s3:GetObject', 's3:PutObject'],
        resources: [props.bucket.arnForObjects(`${prefix}*`), props.bucket.arnForObjects(`${layers}*`)],
      }),
    );
    // The ceiling for deletes: staged uploads (removed after import) and cached layers being replaced
    // (deleting a session is the session-purge role's). Session policies narrow it: runner
    // credentials may delete uploads only, the API side one repository's layers.
    this.role.addToPolicy(
      new iam.PolicyStatement({
        actions: ['s3:DeleteObject'],
        resources: [props.bucket.arnForObjects(`${prefix}*`), props.bucket.arnForObjects(`${layers}*`)],
      }),
    );
    // Tags on staged uploads and stop markers, which the lifecycle rule expires by (session policies narrow it to those keys).
    this.role.addToPolicy(new iam.PolicyStatement({ actions: ['s3:PutObjectTagging'], resources: [props.bucket.arnForObjects(`${prefix}*`)] }));
    this.role.addToPolicy(
      new iam.PolicyStatement({
        actions: ['s3:ListBucket'],
        resources: [props.bucket.bucketArn],
        conditions: { StringLike: { 's3:prefix': [`${prefix}*`, `${layers}*`] } },
      }),
    );
    // Dropping a repository's layers deletes each version (the bucket is versioned: functions/stores/delete-prefix.ts).
    this.role.addToPolicy(new iam.PolicyStatement({ actions: ['s3:DeleteObjectVersion'], resources: [props.bucket.arnForObjects(`${layers}*`)] }));
    this.role.addToPolicy(
      new iam.PolicyStatement({
        actions: ['s3:ListBucketVersions'],
        resources: [props.bucket.bucketArn],
        conditions: { StringLike: { 's3:prefix': [`${layers}*`] } },
      }),
    );
    for (const trusted of props.trustedBy) {
      trusted.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['sts:AssumeRole'], resources: [this.role.roleArn] }));
    }
  }
}
