import { beforeAll, describe, expect, it } from 'vitest';
import { actionsOf, show, statementsOf, synthStage, type Synthesized } from './synth-stack.ts';

type Resource = { Type: string; Properties: Record<string, any> };
const resources = (s: Synthesized) => s.template.toJSON().Resources as Record<string, Resource>;
const ofType = (s: Synthesized, type: string) => Object.entries(resources(s)).filter(([, r]) => r.Type === type);
const propsOf = (s: Synthesized, construct: { node: { defaultChild?: unknown } }) => resources(s)[s.id(construct)]!.Properties;

/** Everything that bills by the hour whatever the traffic (docs/deploy.md, "What it costs"). */
const ALWAYS_ON = [
  'AWS::EC2::NatGateway',
  'AWS::EC2::EIP',
  'AWS::EC2::Instance',
  'AWS::ECS::Service',
  'AWS::ECS::Cluster',
  'AWS::ServiceDiscovery::PrivateDnsNamespace',
  'AWS::NetworkFirewall::Firewall',
  'AWS::ElasticLoadBalancingV2::LoadBalancer',
  'AWS::AutoScaling::AutoScalingGroup',
  'AWS::Lambda::Version',
];

/**
 * The default stages with GitHub issue fixing on and the egress proxy off: GitHub runs clone and
 * push through the git function, outside the runner's VPC, and nothing bills while idle.
 */
describe('GitHub runs in the default deployment: git through a function outside the VPC, $0 idle', () => {
  const stages: Synthesized[] = [];
  beforeAll(() => {
    for (const name of ['dev', 'prod'] as const) stages.push(synthStage(name, (stage) => ({ ...stage, githubApp: true })));
  });

  it('adds no NAT gateway, public address, always-on task or hourly VPC endpoint', () => {
    for (const s of stages) {
      for (const type of ALWAYS_ON) expect([type, ofType(s, type).length]).toEqual([type, 0]);
      // Interface endpoints bill per AZ-hour; the S3 gateway endpoint is free.
      expect(ofType(s, 'AWS::EC2::VPCEndpoint').map(([, r]) => r.Properties.VpcEndpointType)).toEqual(['Gateway']);
      expect(ofType(s, 'AWS::EC2::InternetGateway')).toHaveLength(0);
      expect(ofType(s, 'AWS::EC2::Route')).toHaveLength(0);
      // No function keeps instances warm at a price.
      for (const [, fn] of ofType(s, 'AWS::Lambda::Function')) expect(fn.Properties.ProvisionedConcurrencyConfig).toBeUndefined();
    }
  });

  it('runs the git function from the runner image, outside any VPC, serving git ops only, tenant-isolated', () => {
    for (const s of stages) {
      const fn = propsOf(s, s.stack.gitFunction!.fn);
      const runner = propsOf(s, s.stack.runner.fn);
      expect(fn.FunctionName).toBe(runner.FunctionName.replace('-tenant-runner', '-git'));
      expect(fn.PackageType).toBe('Image');
      expect(show(fn.Code)).toBe(show(runner.Code));
      expect(fn.VpcConfig).toBeUndefined();
      expect(runner.VpcConfig.SubnetIds.length).toBeGreaterThan(0);
      expect(fn.TenancyConfig).toEqual({ TenantIsolationMode: 'PER_TENANT' });
      expect(fn.Environment.Variables).toEqual({ STRATUS_RUNNER_OPS: 'git', STRATUS_EGRESS: 'direct', STRATUS_SANDBOX: 'process' });
    }
  });

  it('gives the git function a role with logs only: no secret, no table, no object, no invoke', () => {
    for (const s of stages) {
      const roleId = s.id(s.stack.gitFunction!.role);
      expect(statementsOf(s.template, roleId)).toEqual([]);
      const role = resources(s)[roleId]!.Properties;
      expect(role.ManagedPolicyArns.map((a: { 'Fn::Join': [string, unknown[]] }) => a['Fn::Join'][1].at(-1))).toEqual([
        ':iam::aws:policy/service-role/AWSLambdaBasicExecutionRole',
      ]);
      expect(propsOf(s, s.stack.gitFunction!.fn).Role).toEqual({ 'Fn::GetAtt': [roleId, 'Arn'] });
    }
  });

  it('lets only the GitHub worker invoke it, and tells only the worker its name', () => {
    for (const s of stages) {
      const gitArn = show({ 'Fn::GetAtt': [s.id(s.stack.gitFunction!.fn), 'Arn'] });
      const invokers = Object.entries(s.template.findResources('AWS::IAM::Policy'))
        .filter(([, p]) => (p.Properties.PolicyDocument.Statement as { Resource: unknown }[]).some((st) => show(st.Resource).includes(gitArn)))
        .flatMap(([, p]) => (p.Properties.Roles as { Ref: string }[]).map((r) => r.Ref));
      expect(invokers).toEqual([s.id(s.stack.githubWorker!.role)]);
      const grant = statementsOf(s.template, s.id(s.stack.githubWorker!.role)).filter((st) => show(st.Resource) === gitArn);
      expect(grant).toEqual([{ Effect: 'Allow', Action: 'lambda:InvokeFunction', Resource: JSON.parse(gitArn) }]);
      expect(propsOf(s, s.stack.githubWorker!.fn).Environment.Variables.STRATUS_GIT_FUNCTION).toEqual({ Ref: s.id(s.stack.gitFunction!.fn) });
      for (const fn of [s.stack.api.fn, s.stack.cron.fn]) expect(propsOf(s, fn).Environment.Variables.STRATUS_GIT_FUNCTION).toBeUndefined();
    }
  });

  it('keeps the GitHub App key with the worker: neither the runner nor the git function can read a secret', () => {
    for (const s of stages) {
      const key = show({ Ref: s.id(s.stack.secrets.githubAppPrivateKey!) });
      const readers = Object.entries(s.template.findResources('AWS::IAM::Policy'))
        .filter(([, p]) => show(p.Properties.PolicyDocument).includes(key))
        .flatMap(([, p]) => (p.Properties.Roles as { Ref: string }[]).map((r) => r.Ref));
      expect(readers).toEqual([s.id(s.stack.githubWorker!.role)]);
      for (const role of [s.stack.runner.role, s.stack.gitFunction!.role]) {
        expect(
          statementsOf(s.template, s.id(role))
            .flatMap(actionsOf)
            .filter((a) => a.startsWith('secretsmanager:')),
        ).toEqual([]);
      }
      for (const fn of [s.stack.runner.fn, s.stack.gitFunction!.fn]) expect(show(propsOf(s, fn).Environment)).not.toMatch(/GITHUB|SECRET/);
    }
  });
});

describe('without GitHub issue fixing', () => {
  it('has no git function at all', () => {
    const s = synthStage('dev');
    expect(s.stack.gitFunction).toBeUndefined();
    expect(ofType(s, 'AWS::Lambda::Function').filter(([, f]) => String(f.Properties.FunctionName).endsWith('-git'))).toHaveLength(0);
  });
});

/**
 * Set-up steps' registry traffic: the egress forwarder, the far end of the S3 mailbox, outside
 * the VPC, started by the bucket's notification for each request object: nothing runs at idle.
 */
describe('the egress forwarder in the default deployment', () => {
  let s: Synthesized;
  beforeAll(() => {
    s = synthStage('prod');
  });
  const bucketArn = () => ({ 'Fn::GetAtt': [s.id(s.stack.data.bucket), 'Arn'] });
  const objects = (pattern: string) => ({ 'Fn::Join': ['', [bucketArn(), `/${pattern}`]] });

  it('is a Node function outside any VPC with the bucket name only: no secret, no table, no runner', () => {
    const fn = propsOf(s, s.stack.egressForwarder.function.fn);
    expect(fn.FunctionName).toBe('stratus-prod-egress-forwarder');
    expect(fn.Runtime).toBe('nodejs24.x');
    expect(fn.VpcConfig).toBeUndefined();
    expect(fn.ReservedConcurrentExecutions).toBeUndefined();
    expect(fn.Environment.Variables).toEqual({
      NODE_OPTIONS: '--enable-source-maps',
      STRATUS_BUCKET: { Ref: s.id(s.stack.data.bucket) },
      POWERTOOLS_SERVICE_NAME: 'stratus-egress-forwarder',
    });
  });

  it('may read request objects and grants and write responses, nothing else', () => {
    expect(statementsOf(s.template, s.id(s.stack.egressForwarder.function.role))).toEqual([
      { Effect: 'Allow', Action: ['xray:PutTraceSegments', 'xray:PutTelemetryRecords'], Resource: '*' },
      { Effect: 'Allow', Action: 's3:GetObject', Resource: [objects('workspaces/*/egress/*.egress-request.json'), objects('egress-grants/*')] },
      { Effect: 'Allow', Action: ['s3:PutObject', 's3:PutObjectTagging'], Resource: objects('workspaces/*/egress/*.egress-response') },
    ]);
  });

  it('is invoked by the bucket alone, for new request objects under workspaces/ only', () => {
    const [notification] = ofType(s, 'Custom::S3BucketNotifications').map(([, r]) => r.Properties);
    const fnArn = { 'Fn::GetAtt': [s.id(s.stack.egressForwarder.function.fn), 'Arn'] };
    expect(notification!.BucketName).toEqual({ Ref: s.id(s.stack.data.bucket) });
    expect(notification!.NotificationConfiguration).toEqual({
      LambdaFunctionConfigurations: [
        {
          Events: ['s3:ObjectCreated:*'],
          Filter: {
            Key: {
              FilterRules: [
                { Name: 'suffix', Value: '.egress-request.json' },
                { Name: 'prefix', Value: 'workspaces/' },
              ],
            },
          },
          LambdaFunctionArn: fnArn,
        },
      ],
    });
    const permissions = ofType(s, 'AWS::Lambda::Permission')
      .map(([, r]) => r.Properties)
      .filter((p) => show(p.FunctionName) === show(fnArn));
    expect(permissions).toEqual([
      { Action: 'lambda:InvokeFunction', FunctionName: fnArn, Principal: 's3.amazonaws.com', SourceAccount: '123456789012', SourceArn: bucketArn() },
    ]);
  });

  it("keeps grants out of the runner's reach: neither its role nor its VPC endpoint names them; only the engines write them", () => {
    const endpoint = ofType(s, 'AWS::EC2::VPCEndpoint')[0]![1].Properties;
    expect(show(endpoint.PolicyDocument)).not.toContain('egress-grants');
    // The runner's role holds its X-Ray statement only (test/infra/iam.test.ts).
    expect(statementsOf(s.template, s.id(s.stack.runner.role))).toEqual([
      { Effect: 'Allow', Action: ['xray:PutTraceSegments', 'xray:PutTelemetryRecords'], Resource: '*' },
    ]);
    const grantStatements = Object.values(s.template.findResources('AWS::IAM::Policy')).flatMap((p) =>
      (p.Properties.PolicyDocument.Statement as { Action: string | string[]; Resource: unknown }[])
        .filter((st) => show(st.Resource).includes('egress-grants') && show(st.Action).includes('Put'))
        .map((st) => ({ roles: show(p.Properties.Roles), statement: st })),
    );
    const engines = [s.stack.api, s.stack.cron, ...(s.stack.githubWorker ? [s.stack.githubWorker] : [])];
    expect(grantStatements.map((g) => g.statement)).toEqual(
      engines.map(() => ({ Effect: 'Allow', Action: ['s3:PutObject', 's3:DeleteObject'], Resource: objects('egress-grants/*') })),
    );
    for (const engine of engines) expect(grantStatements.some((g) => g.roles.includes(s.id(engine.role)))).toBe(true);
  });

  it('makes the mailbox the way out of the default stage: the runner and the engines are told so, at no idle cost', () => {
    expect(propsOf(s, s.stack.runner.fn).Environment.Variables.STRATUS_EGRESS).toBe('mailbox');
    for (const engine of [s.stack.api, s.stack.cron]) expect(propsOf(s, engine.fn).Environment.Variables.STRATUS_EGRESS).toBe('mailbox');
    // Nothing that bills by the hour: no NAT, no task, no interface endpoint, no secret for grants.
    for (const type of ['AWS::EC2::NatGateway', 'AWS::ECS::Service']) expect([type, ofType(s, type).length]).toEqual([type, 0]);
    expect(ofType(s, 'AWS::EC2::VPCEndpoint').map(([, r]) => r.Properties.VpcEndpointType)).toEqual(['Gateway']);
    expect(show(s.template.findResources('AWS::SecretsManager::Secret'))).not.toContain('egress');
  });
});
