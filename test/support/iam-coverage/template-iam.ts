import type { Template } from 'aws-cdk-lib/assertions';

/**
 * The IAM side of a synthesized template with its intrinsic functions resolved to strings, as
 * CloudFormation would resolve them in the stack's account and region: each function's role,
 * each role's policies (inline, attached, managed by the stack) and trust policy, and the
 * resource policies of buckets. Resources CloudFormation names itself (a role without a
 * RoleName, a bucket without a BucketName) are named by their logical id.
 */
export interface TemplateIam {
  region: string;
  account: string;
  /** Function name → the logical id of its execution role. */
  functionRoles: Map<string, string>;
  /** Role name (RoleName, else logical id) → logical id. */
  rolesByName: Map<string, string>;
  roleArn(roleId: string): string;
  roleName(roleId: string): string;
  /** The role's own policy documents (resolved), one per policy. */
  policiesOf(roleId: string): { name: string; policy: PolicyDocument }[];
  trustPolicyOf(roleId: string): PolicyDocument;
  /** The bucket policy of the bucket with this name, if any. */
  bucketPolicy(bucketName: string): PolicyDocument | undefined;
  /** A resource's resolved `Ref`. */
  ref(logicalId: string): string;
}

export interface PolicyDocument {
  Version?: string;
  Statement: Record<string, unknown>[];
}

type Resources = Record<string, { Type: string; Properties?: Record<string, unknown> }>;

export function templateIam(template: Template, env: { region: string; account: string }): TemplateIam {
  const resources = (template.toJSON() as { Resources: Resources }).Resources;
  const resolve = resolver(resources, env);
  const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);
  const functionRoles = new Map<string, string>();
  for (const [, fn] of ofType('AWS::Lambda::Function')) {
    const role = fn.Properties?.Role as { 'Fn::GetAtt'?: [string, string] } | undefined;
    if (fn.Properties?.FunctionName && role?.['Fn::GetAtt']) functionRoles.set(String(resolve(fn.Properties.FunctionName)), role['Fn::GetAtt'][0]);
  }
  const roleName = (roleId: string) => String(resolve(resources[roleId]?.Properties?.RoleName ?? roleId));
  const rolesByName = new Map(ofType('AWS::IAM::Role').map(([id]) => [roleName(id), id]));
  const attachedTo = (policy: { Properties?: Record<string, unknown> }, roleId: string) =>
    ((policy.Properties?.Roles ?? []) as { Ref?: string }[]).some((r) => r.Ref === roleId);
  return {
    ...env,
    functionRoles,
    rolesByName,
    roleName,
    roleArn: (roleId) => `arn:aws:iam::${env.account}:role/${roleName(roleId)}`,
    policiesOf(roleId) {
      const inline = ((resources[roleId]?.Properties?.Policies ?? []) as { PolicyName: string; PolicyDocument: unknown }[]).map((p) => ({
        name: p.PolicyName,
        policy: resolve(p.PolicyDocument) as PolicyDocument,
      }));
      const attached = [...ofType('AWS::IAM::Policy'), ...ofType('AWS::IAM::ManagedPolicy')]
        .filter(([, p]) => attachedTo(p, roleId))
        .map(([id, p]) => ({ name: id, policy: resolve(p.Properties!.PolicyDocument) as PolicyDocument }));
      return [...inline, ...attached];
    },
    trustPolicyOf: (roleId) => resolve(resources[roleId]?.Properties?.AssumeRolePolicyDocument) as PolicyDocument,
    bucketPolicy(bucketName) {
      const found = ofType('AWS::S3::BucketPolicy').find(([, p]) => resolve(p.Properties!.Bucket) === bucketName);
      return found ? (resolve(found[1].Properties!.PolicyDocument) as PolicyDocument) : undefined;
    },
    ref: (logicalId) => String(resolve({ Ref: logicalId })),
  };
}

/** Resolves Ref, Fn::GetAtt …Arn, Fn::Join and Fn::Sub (without a variable map) over the template's resources. */
function resolver(resources: Resources, env: { region: string; account: string }): (value: unknown) => unknown {
  const pseudo: Record<string, string> = {
    'AWS::Partition': 'aws',
    'AWS::Region': env.region,
    'AWS::AccountId': env.account,
    'AWS::URLSuffix': 'amazonaws.com',
    'AWS::StackName': 'stack',
  };
  const name = (id: string, property: string) => {
    const value = resources[id]?.Properties?.[property];
    return value === undefined ? id : String(resolve(value));
  };
  const ref = (id: string): string => {
    if (pseudo[id]) return pseudo[id];
    const type = resources[id]?.Type;
    if (type === 'AWS::SecretsManager::Secret') return `arn:aws:secretsmanager:${env.region}:${env.account}:secret:${name(id, 'Name')}-AbCdEf`;
    if (type === 'AWS::S3::Bucket') return name(id, 'BucketName');
    if (type === 'AWS::DynamoDB::GlobalTable' || type === 'AWS::DynamoDB::Table') return name(id, 'TableName');
    if (type === 'AWS::Lambda::Function') return name(id, 'FunctionName');
    if (type === 'AWS::IAM::Role') return name(id, 'RoleName');
    return id;
  };
  const arn = (id: string): string => {
    const type = resources[id]?.Type;
    if (type === 'AWS::S3::Bucket') return `arn:aws:s3:::${ref(id)}`;
    if (type === 'AWS::DynamoDB::GlobalTable' || type === 'AWS::DynamoDB::Table') return `arn:aws:dynamodb:${env.region}:${env.account}:table/${ref(id)}`;
    if (type === 'AWS::Lambda::Function') return `arn:aws:lambda:${env.region}:${env.account}:function:${ref(id)}`;
    if (type === 'AWS::IAM::Role') return `arn:aws:iam::${env.account}:role/${ref(id)}`;
    if (type === 'AWS::SQS::Queue') return `arn:aws:sqs:${env.region}:${env.account}:${name(id, 'QueueName')}`;
    if (type === 'AWS::SNS::Topic') return `arn:aws:sns:${env.region}:${env.account}:${name(id, 'TopicName')}`;
    if (type === 'AWS::Logs::LogGroup') return `arn:aws:logs:${env.region}:${env.account}:log-group:${name(id, 'LogGroupName')}:*`;
    return `arn:aws:unknown:${env.region}:${env.account}:${id}`;
  };
  const resolve = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(resolve);
    if (!value || typeof value !== 'object') return value;
    const v = value as Record<string, unknown>;
    if (typeof v.Ref === 'string') return ref(v.Ref);
    if (Array.isArray(v['Fn::GetAtt'])) {
      const [id, attribute] = v['Fn::GetAtt'] as [string, string];
      return attribute === 'Arn' ? arn(id) : `${id}.${attribute}`;
    }
    if (Array.isArray(v['Fn::Join'])) {
      const [separator, parts] = v['Fn::Join'] as [string, unknown[]];
      return (resolve(parts) as unknown[]).join(separator);
    }
    if (typeof v['Fn::Sub'] === 'string')
      return (v['Fn::Sub'] as string).replace(/\$\{([^}]+)\}/g, (_, k: string) => (k.includes('.') ? String(resolve({ 'Fn::GetAtt': k.split('.') })) : ref(k)));
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, resolve(x)]));
  };
  return resolve;
}
