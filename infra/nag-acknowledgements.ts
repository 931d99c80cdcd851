import { Token, Validations, type CfnElement, type Stack } from 'aws-cdk-lib';
import { EGRESS_GRANTS_PREFIX } from '../sandbox-runner/common/egress-mailbox.ts';
import type { IConstruct } from 'constructs';
import { BUCKET_LAYOUT } from '../functions/stores/bucket-layout.ts';
import { TABLE_KEYS, TABLES } from '../functions/stores/tables.ts';
import type { AppSecrets } from './constructs/app-secrets.ts';
import { modelsBehindProfiles } from './constructs/bedrock-access.ts';
import type { CustomDomain } from './constructs/custom-domain.ts';
import type { DataStores } from './constructs/data-stores.ts';
import type { EgressProxy } from './constructs/egress-proxy.ts';
import type { SandboxRunnerFunction } from './constructs/sandbox-runner-function.ts';
import type { GitFunction } from './constructs/git-function.ts';
import type { EgressForwarderFunction } from './constructs/egress-forwarder-function.ts';
import type { Schedules } from './constructs/schedules.ts';
import type { TurnEngineFunction } from './constructs/turn-engine-function.ts';
import type { WorkspaceAccessRole } from './constructs/workspace-access-role.ts';
import { PURGED_PREFIXES, type SessionPurgeRole } from './constructs/session-purge-role.ts';

/**
 * The constructs the acknowledgements name. The stack passes itself; the shape is declared here
 * so this file needs only the constructs, not the stack that calls it.
 */
export type NagSubjects = Stack & {
  readonly data: Pick<DataStores, 'bucket' | 'tables'>;
  readonly secrets: Pick<AppSecrets, 'all'>;
  readonly runner: Pick<SandboxRunnerFunction, 'role'>;
  readonly api: Pick<TurnEngineFunction, 'role'>;
  readonly cron: Pick<TurnEngineFunction, 'role'>;
  readonly githubWorker?: Pick<TurnEngineFunction, 'role'>;
  readonly gitFunction?: Pick<GitFunction, 'role'>;
  readonly egressForwarder: Pick<EgressForwarderFunction, 'function'>;
  readonly schedules: Pick<Schedules, 'group'>;
  readonly workspaceAccess: Pick<WorkspaceAccessRole, 'role'>;
  readonly sessionPurge: Pick<SessionPurgeRole, 'role'>;
  readonly asyncFailures: { readonly queue: IConstruct };
  readonly alarms: { readonly deliveryFailures: IConstruct };
  readonly egressProxy?: Pick<EgressProxy, 'tokenKey' | 'cluster' | 'taskDefinition'>;
  readonly customDomain?: Pick<CustomDomain, 'distribution'>;
  /** The Bedrock model and profile ids the turn functions may invoke (empty with the Anthropic API). */
  readonly bedrockModels: readonly string[];
};

/**
 * Every cdk-nag AwsSolutions finding the stack keeps, each acknowledged on the one construct it
 * concerns, with the reason it is acceptable. Anything new fails `npm run synth`.
 */
export function acknowledgeNagFindings(stack: NagSubjects): void {
  ack(
    stack.data.bucket,
    'S1',
    'Server access logs would write a log object per workspace blob transfer; CloudTrail S3 data events are the audit trail to enable when an account needs one.',
  );

  for (const secret of stack.secrets.all()) {
    ack(
      secret,
      'SMG4',
      'The values are issued by third parties (Anthropic, GitHub) or chosen by the operator (API tokens); no rotation Lambda can create them. Rotation is done by writing a new value (docs/deploy.md).',
    );
  }

  acknowledgeBasicExecution(stack);

  ack(
    stack.runner.role,
    'IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole]',
    "AWSLambdaVPCAccessExecutionRole is what Lambda needs to create and remove the function's network interfaces in the VPC (ec2 network-interface actions, which Lambda calls on * ) plus logging; the runner's subnets give commands no route to the EC2 API.",
  );

  ack(
    stack.runner.role.node.tryFindChild('DefaultPolicy')!,
    'IAM5[Resource::*]',
    'X-Ray tracing: xray:PutTraceSegments and xray:PutTelemetryRecords support no resource-level permissions.',
  );
  for (const queue of [stack.asyncFailures.queue, stack.alarms.deliveryFailures]) {
    ack(
      queue,
      'SQS3',
      "This queue is itself where failed work lands (a Lambda on-failure destination or an SNS subscription's redrive policy); a queue behind it would hold nothing.",
    );
  }

  if (stack.egressProxy) acknowledgeEgressProxy(stack.egressProxy);
  acknowledgeEgressForwarder(stack);
  if (stack.customDomain) acknowledgeCustomDomain(stack.customDomain);
  acknowledgeEngineGrants(stack);
}

/** Every function's role carries the managed logging policy. */
function acknowledgeBasicExecution(stack: NagSubjects): void {
  for (const role of [
    stack.api.role,
    stack.cron.role,
    ...(stack.githubWorker ? [stack.githubWorker.role] : []),
    ...(stack.gitFunction ? [stack.gitFunction.role] : []),
    stack.egressForwarder.function.role,
    stack.runner.role,
  ]) {
    ack(
      role,
      'IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
      'AWSLambdaBasicExecutionRole grants only logs:CreateLogGroup/CreateLogStream/PutLogEvents, what every function needs to log.',
    );
  }
}

const ack = (scope: IConstruct, id: string, reason: string) => Validations.of(scope).acknowledge({ id: `AwsSolutions-${id}`, reason });

function acknowledgeCustomDomain(domain: NonNullable<NagSubjects['customDomain']>): void {
  ack(
    domain.distribution,
    'CFR1',
    'Who may call the API is decided by its bearer tokens, not by country; an operator who wants geo restrictions adds them to the distribution (docs/deploy.md, "Custom domain").',
  );
  ack(
    domain.distribution,
    'CFR2',
    'A web ACL costs 5 USD a month plus per rule and request, and its rules are the operator\'s to choose; the API itself answers abuse with 4xx and reserved concurrency (docs/deploy.md, "Custom domain").',
  );
  ack(
    domain.distribution,
    'CFR3',
    'Standard logs need an ACL-enabled bucket; the API function already logs every request with its id, tenant and status, which is the record to keep (docs/deploy.md, "Custom domain").',
  );
}

function acknowledgeEgressProxy(proxy: NonNullable<NagSubjects['egressProxy']>): void {
  ack(
    proxy.tokenKey,
    'SMG4',
    'A random HMAC key Stratus itself generated; rotating it means writing a new value and restarting the proxy service and the API/cron containers together (docs/deploy.md), which a rotation Lambda cannot coordinate.',
  );
  ack(
    proxy.cluster,
    'ECS4',
    'One small proxy task; Container Insights would add per-metric charges to an optional component whose point is a low idle cost. The proxy logs every decision to CloudWatch Logs.',
  );
  ack(
    proxy.taskDefinition.executionRole!.node.tryFindChild('DefaultPolicy')!,
    'IAM5[Resource::*]',
    'ecr:GetAuthorizationToken, which ECS needs to pull the proxy image, supports no resource-level permissions.',
  );
}

/** The egress forwarder's prefix-scoped grants, and the handler CDK deploys to set the bucket's notification. */
function acknowledgeEgressForwarder(stack: NagSubjects): void {
  const bucket = `<${stack.getLogicalId(stack.data.bucket.node.defaultChild as CfnElement)}.Arn>`;
  const policy = stack.egressForwarder.function.role.node.tryFindChild('DefaultPolicy')!;
  ack(policy, 'IAM5[Resource::*]', 'X-Ray tracing: xray:PutTraceSegments and xray:PutTelemetryRecords support no resource-level permissions.');
  for (const pattern of ['workspaces/*/egress/*.egress-request.json', 'workspaces/*/egress/*.egress-response', 'egress-grants/*']) {
    ack(
      policy,
      `IAM5[Resource::${bucket}/${pattern}]`,
      "The egress mailbox: request objects in, response objects out, under every workspace's egress/ folder only, and the grants the harness writes; which workspace a request may reach is decided by its grant (docs/security.md).",
    );
  }
  const handler = stack.node.children.find((c) => c.node.id.startsWith('BucketNotificationsHandler'));
  if (!handler) return;
  ack(
    handler,
    'IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
    "The deploy-time handler CDK adds to put the bucket's notification configuration; it logs with the basic execution role.",
  );
  ack(
    handler,
    'IAM5[Resource::*]',
    "CDK's bucket-notification handler calls s3:PutBucketNotification at deploy time only; the construct grants it on * by design.",
  );
}

/** The wildcards in the turn engines' and the workspace-access role's policies, each scoped to one prefix or index. */
function acknowledgeEngineGrants(stack: NagSubjects): void {
  const ref = (element: IConstruct | undefined) => `<${stack.getLogicalId(element as CfnElement)}.Arn>`;
  // cdk-nag prints a pseudo parameter as <AWS::Region> when the stack is environment-agnostic, the value otherwise.
  const region = Token.isUnresolved(stack.region) ? '<AWS::Region>' : stack.region;
  const account = Token.isUnresolved(stack.account) ? '<AWS::AccountId>' : stack.account;
  const bucket = ref(stack.data.bucket.node.defaultChild);
  for (const engine of [stack.api, stack.cron, ...(stack.githubWorker ? [stack.githubWorker] : [])]) {
    const policy = engine.role.node.tryFindChild('DefaultPolicy')!;
    ack(policy, 'IAM5[Resource::*]', 'X-Ray tracing: xray:PutTraceSegments and xray:PutTelemetryRecords support no resource-level permissions.');
    for (const key of TABLE_KEYS.filter((k) => 'indexes' in TABLES[k])) {
      ack(
        policy,
        `IAM5[Resource::${ref(stack.data.tables[key].node.defaultChild)}/index/*]`,
        "Queries through the table's own GSIs (byTenant); the wildcard covers only that table's indexes.",
      );
    }
    ack(
      policy,
      `IAM5[Resource::${bucket}/${BUCKET_LAYOUT.toolResults}*]`,
      'The harness writes persisted tool results under keys generated per session and tool_use id; the grant is limited to that prefix.',
    );
    ack(
      policy,
      `IAM5[Resource::${bucket}/${BUCKET_LAYOUT.spill}*]`,
      'Payloads of oversized DynamoDB items, keyed per session and message; the grant is limited to that prefix.',
    );
    if (!stack.egressProxy) {
      ack(
        policy,
        `IAM5[Resource::${bucket}/${EGRESS_GRANTS_PREFIX}*]`,
        "The egress mailbox's grants, one per workspace, written before its commands run and deleted after; the grant is limited to that prefix (docs/security.md).",
      );
    }
    for (const model of modelsBehindProfiles(stack.bedrockModels)) {
      ack(
        policy,
        `IAM5[Resource::arn:<AWS::Partition>:bedrock:*::foundation-model/${model}]`,
        'A cross-region inference profile routes to this one model in any of its regions; the statement is conditioned on bedrock:InferenceProfileArn, so the model is reachable only through the configured profile.',
      );
    }
  }
  ack(
    stack.api.role.node.tryFindChild('DefaultPolicy')!,
    `IAM5[Resource::arn:<AWS::Partition>:scheduler:${region}:${account}:schedule/${stack.schedules.group.scheduleGroupName}/*]`,
    'Schedules are created at run time with names the API chooses; the grant is limited to the Stratus schedule group.',
  );
  acknowledgeStorageRoles(stack, bucket);
}

/** The storage roles' ceilings: session policies narrow every use of them. */
function acknowledgeStorageRoles(stack: NagSubjects, bucket: string): void {
  ack(
    stack.workspaceAccess.role.node.tryFindChild('DefaultPolicy')!,
    `IAM5[Resource::${bucket}/${BUCKET_LAYOUT.workspaces}*]`,
    'The ceiling of the workspace-access role. Nothing uses it as is: every AssumeRole carries a session policy narrowing it to workspaces/{id}/* of one session (functions/runner-client/sts-credentials.ts).',
  );
  ack(
    stack.workspaceAccess.role.node.tryFindChild('DefaultPolicy')!,
    `IAM5[Resource::${bucket}/${BUCKET_LAYOUT.environments}*]`,
    'The ceiling for cached environment layers. Every AssumeRole for them carries a session policy naming one layer key, or one tenant repository folder for deletion (sandbox-runner/common/environment-policy.ts).',
  );
  ack(
    stack.workspaceAccess.role.node.tryFindChild('DefaultPolicy')!,
    `IAM5[Resource::${bucket}/${BUCKET_LAYOUT.workspaces}*/uploads/*]`,
    'Deleting staged uploads once imported; the session policy narrows it to workspaces/{id}/uploads/* of one session.',
  );
  for (const prefix of PURGED_PREFIXES) {
    ack(
      stack.sessionPurge.role.node.tryFindChild('DefaultPolicy')!,
      `IAM5[Resource::${bucket}/${prefix}*]`,
      "The ceiling of the session-purge role. Nothing uses it as is: every AssumeRole carries a session policy narrowing it to one deleted session's prefixes (functions/runner-client/purge-credentials.ts).",
    );
  }
}
