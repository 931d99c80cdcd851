import * as iam from 'aws-cdk-lib/aws-iam';
import type * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as s3n from 'aws-cdk-lib/aws-s3-notifications';
import { Construct } from 'constructs';
import { EGRESS_GRANTS_PREFIX, EGRESS_REQUEST_SUFFIX, EGRESS_RESPONSE_SUFFIX } from '../../sandbox-runner/common/egress-mailbox.ts';
import { WORKSPACES_PREFIX } from '../../sandbox-runner/common/workspace-prefix.ts';
import { ENTRIES } from './bundle-options.ts';
import { TurnEngineFunction } from './turn-engine-function.ts';

export interface EgressForwarderFunctionProps {
  readonly prefix: string;
  readonly bucket: s3.IBucket;
  readonly logRetentionDays: logs.RetentionDays;
  readonly sourceMaps: boolean;
}

/** Where mailbox objects sit under a workspace's prefix (sandbox-runner/common/egress-mailbox.ts). */
const MAILBOX = `${WORKSPACES_PREFIX}*/egress/*`;

/**
 * The egress forwarder: the far end of the S3 mailbox through which sandboxed HTTP requests
 * leave the runner's VPC with no idle cost (docs/security.md, "Git and registry traffic at $0
 * idle"). A Node function outside any VPC, invoked by the bucket's notification for each new
 * request object (key suffix `.egress-request.json` under `workspaces/`); it forwards a request
 * only to a host the harness's grant for that workspace lists. Its role reads request objects and
 * grants and writes response objects (tagged short-lived), nothing else: no secret, no table, no
 * other prefix, no invoke.
 */
export class EgressForwarderFunction extends Construct {
  readonly function: TurnEngineFunction;

  constructor(scope: Construct, id: string, props: EgressForwarderFunctionProps) {
    super(scope, id);
    this.function = new TurnEngineFunction(this, 'Forwarder', {
      functionName: `${props.prefix}-egress-forwarder`,
      description: 'Stratus egress forwarder: relays sandboxed HTTP requests from the S3 mailbox to allow-listed hosts.',
      entry: ENTRIES.egressForwarder,
      memoryMb: 1024,
      timeoutSeconds: 120,
      environment: { STRATUS_BUCKET: props.bucket.bucketName, POWERTOOLS_SERVICE_NAME: 'stratus-egress-forwarder' },
      logRetentionDays: props.logRetentionDays,
      sourceMaps: props.sourceMaps,
    });
    const role = this.function.role;
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['s3:GetObject'],
        resources: [props.bucket.arnForObjects(`${MAILBOX}${EGRESS_REQUEST_SUFFIX}`), props.bucket.arnForObjects(`${EGRESS_GRANTS_PREFIX}*`)],
      }),
    );
    // PutObject with a Tagging header needs PutObjectTagging as well.
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['s3:PutObject', 's3:PutObjectTagging'],
        resources: [props.bucket.arnForObjects(`${MAILBOX}${EGRESS_RESPONSE_SUFFIX}`)],
      }),
    );
    // No ListBucket: a missing grant then reads as AccessDenied, which the forwarder takes as no grant.
    props.bucket.addEventNotification(s3.EventType.OBJECT_CREATED, new s3n.LambdaDestination(this.function.fn), {
      prefix: WORKSPACES_PREFIX,
      suffix: EGRESS_REQUEST_SUFFIX,
    });
  }
}
