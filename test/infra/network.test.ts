import { beforeAll, describe, expect, it } from 'vitest';
import type { StageConfig } from '../../infra/config/stages.ts';
import { statementsOf, synthStage, type Synthesized } from './synth-stack.ts';

const withEgressProxy = (stage: StageConfig): StageConfig => ({
  ...stage,
  network: { ...stage.network, egressProxy: true, egressProxyDockerfile: 'test/infra/fixtures/egress-proxy.Dockerfile' },
});

type Resource = { Type: string; Properties: Record<string, any> };
const ofType = (s: Synthesized, type: string) => Object.entries(s.template.toJSON().Resources as Record<string, Resource>).filter(([, r]) => r.Type === type);
const propsOf = (s: Synthesized, construct: { node: { defaultChild?: unknown } }) =>
  (s.template.toJSON().Resources as Record<string, Resource>)[s.id(construct)]!.Properties;
const ref = (logicalId: string) => ({ Ref: logicalId });

describe('the runner network: no egress by default', () => {
  let dev: Synthesized;
  let prod: Synthesized;
  beforeAll(() => {
    dev = synthStage('dev');
    prod = synthStage('prod');
  });

  it('puts the runner in a VPC without NAT gateways, internet gateway or any route out', () => {
    for (const s of [dev, prod]) {
      expect(ofType(s, 'AWS::EC2::VPC')).toHaveLength(1);
      for (const type of ['AWS::EC2::NatGateway', 'AWS::EC2::InternetGateway', 'AWS::EC2::EgressOnlyInternetGateway', 'AWS::EC2::Route', 'AWS::EC2::EIP']) {
        expect([type, ofType(s, type).length]).toEqual([type, 0]);
      }
      const subnets = ofType(s, 'AWS::EC2::Subnet');
      expect(subnets).toHaveLength(2);
      for (const [, subnet] of subnets) expect(subnet.Properties.MapPublicIpOnLaunch).toBe(false);
      const vpc = propsOf(s, s.stack.runner.fn).VpcConfig;
      expect(vpc.SubnetIds.map((r: { Ref: string }) => r.Ref).sort()).toEqual(subnets.map(([id]) => id).sort());
      expect(vpc.SecurityGroupIds).toEqual([{ 'Fn::GetAtt': [s.id(s.stack.network.runnerSecurityGroup), 'GroupId'] }]);
    }
  });

  it('reaches S3 through a gateway endpoint on the runner route tables, limited to the workspace prefix of its bucket', () => {
    const endpoints = ofType(dev, 'AWS::EC2::VPCEndpoint');
    expect(endpoints).toHaveLength(1);
    const endpoint = endpoints[0]![1].Properties;
    expect(endpoint.VpcEndpointType).toBe('Gateway');
    expect(endpoint.ServiceName).toEqual({ 'Fn::Join': ['', ['com.amazonaws.', { Ref: 'AWS::Region' }, '.s3']] });
    expect(endpoint.RouteTableIds).toHaveLength(2);
    const bucketArn = { 'Fn::GetAtt': [dev.id(dev.stack.data.bucket), 'Arn'] };
    expect(endpoint.PolicyDocument.Statement).toEqual([
      {
        Action: ['s3:GetObject', 's3:PutObject'],
        Effect: 'Allow',
        Principal: { AWS: '*' },
        Resource: [{ 'Fn::Join': ['', [bucketArn, '/workspaces/*']] }, { 'Fn::Join': ['', [bucketArn, '/environments/*']] }],
      },
      { Action: 's3:ListBucket', Effect: 'Allow', Principal: { AWS: '*' }, Resource: bucketArn },
      // The short-lived tag on egress mailbox requests, and on nothing else.
      {
        Action: 's3:PutObjectTagging',
        Effect: 'Allow',
        Principal: { AWS: '*' },
        Resource: { 'Fn::Join': ['', [bucketArn, '/workspaces/*/egress/*.egress-request.json']] },
      },
    ]);
  });

  it('lets the runner security group out on 443 only and in not at all', () => {
    const sg = propsOf(dev, dev.stack.network.runnerSecurityGroup);
    expect(sg.SecurityGroupEgress).toEqual([
      { CidrIp: '0.0.0.0/0', Description: 'S3 through the gateway endpoint (the only route)', FromPort: 443, IpProtocol: 'tcp', ToPort: 443 },
    ]);
    expect(sg.SecurityGroupIngress).toBeUndefined();
    expect(ofType(dev, 'AWS::EC2::SecurityGroupIngress')).toHaveLength(0);
    expect(ofType(dev, 'AWS::EC2::SecurityGroupEgress')).toHaveLength(0);
  });

  it('logs the VPC flows, and tells runner and harness that commands go out through the S3 mailbox (no proxy, no key)', () => {
    expect(ofType(dev, 'AWS::EC2::FlowLog').map(([, r]) => r.Properties.TrafficType)).toEqual(['ALL']);
    expect(propsOf(dev, dev.stack.runner.fn).Environment.Variables).toEqual({ STRATUS_EGRESS: 'mailbox' });
    for (const fn of [dev.stack.api.fn, dev.stack.cron.fn]) {
      const env = propsOf(dev, fn).Environment.Variables;
      expect(env.STRATUS_EGRESS).toBe('mailbox');
      expect(env.STRATUS_EGRESS_KEY_SECRET).toBeUndefined();
    }
    expect(dev.stack.egressProxy).toBeUndefined();
    for (const type of ['AWS::ECS::Cluster', 'AWS::ECS::Service', 'AWS::ServiceDiscovery::PrivateDnsNamespace'])
      expect([type, ofType(dev, type).length]).toEqual([type, 0]);
  });

  it("lets Lambda manage the runner's network interfaces, and grants the runner nothing else new", () => {
    const role = propsOf(dev, dev.stack.runner.role);
    expect(role.ManagedPolicyArns.map((a: { 'Fn::Join': [string, unknown[]] }) => a['Fn::Join'][1].at(-1))).toEqual([
      ':iam::aws:policy/service-role/AWSLambdaBasicExecutionRole',
      ':iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole',
    ]);
    // Only its traces (X-Ray takes no resource).
    expect(statementsOf(dev.template, dev.id(dev.stack.runner.role))).toEqual([
      { Effect: 'Allow', Action: ['xray:PutTraceSegments', 'xray:PutTelemetryRecords'], Resource: '*' },
    ]);
  });
});

describe('the optional egress proxy', () => {
  let s: Synthesized;
  beforeAll(() => {
    s = synthStage('dev', withEgressProxy);
  });

  it('runs one ARM Fargate task with a public IP in public subnets, found at egress.<prefix>.internal', () => {
    const egress = s.stack.egressProxy!;
    const service = propsOf(s, egress.service);
    expect(service.DesiredCount).toBe(1);
    expect(service.LaunchType).toBe('FARGATE');
    expect(service.NetworkConfiguration.AwsvpcConfiguration.AssignPublicIp).toBe('ENABLED');
    const publicSubnets = ofType(s, 'AWS::EC2::Subnet')
      .filter(([id]) => id.includes('egress'))
      .map(([id]) => ref(id));
    expect(publicSubnets).toHaveLength(2);
    expect(service.NetworkConfiguration.AwsvpcConfiguration.Subnets).toEqual(publicSubnets);
    const task = propsOf(s, egress.taskDefinition);
    expect(task.RuntimePlatform).toEqual({ CpuArchitecture: 'ARM64', OperatingSystemFamily: 'LINUX' });
    expect([task.Cpu, task.Memory]).toEqual(['256', '512']);
    expect(task.ContainerDefinitions[0].Secrets).toEqual([{ Name: 'STRATUS_EGRESS_TOKEN_KEY', ValueFrom: ref(s.id(egress.tokenKey)) }]);
    expect(task.ContainerDefinitions[0].Environment).toBeUndefined();
    expect(propsOf(s, egress.namespace).Name).toBe('stratus-dev.internal');
    expect(ofType(s, 'AWS::EC2::NatGateway')).toHaveLength(0);
    // The task role exists (ECS requires one) but holds no permission.
    expect(statementsOf(s.template, s.id(egress.taskDefinition.taskRole))).toEqual([]);
  });

  it('keeps the runner subnets without a route out: only the public subnets route to the internet gateway', () => {
    const routes = ofType(s, 'AWS::EC2::Route').map(([, r]) => r.Properties);
    expect(routes).toHaveLength(2);
    const runnerTables = new Set(
      ofType(s, 'AWS::EC2::RouteTable')
        .filter(([id]) => id.includes('runner'))
        .map(([id]) => id),
    );
    expect(runnerTables.size).toBe(2);
    for (const route of routes) {
      expect(route.DestinationCidrBlock).toBe('0.0.0.0/0');
      expect(runnerTables.has(route.RouteTableId.Ref)).toBe(false);
    }
    const runnerSubnets: string[] = propsOf(s, s.stack.runner.fn).VpcConfig.SubnetIds.map((r: { Ref: string }) => r.Ref);
    expect(runnerSubnets).toHaveLength(2);
    expect(runnerSubnets.every((id) => id.includes('runner'))).toBe(true);
  });

  it('is the only new destination of the runner, and admits only the runner', () => {
    const runnerSg = { 'Fn::GetAtt': [s.id(s.stack.network.runnerSecurityGroup), 'GroupId'] };
    const proxySg = { 'Fn::GetAtt': [s.id(s.stack.egressProxy!.securityGroup), 'GroupId'] };
    expect(ofType(s, 'AWS::EC2::SecurityGroupEgress').map(([, r]) => r.Properties)).toEqual([
      { Description: 'The egress proxy', DestinationSecurityGroupId: proxySg, FromPort: 3128, GroupId: runnerSg, IpProtocol: 'tcp', ToPort: 3128 },
    ]);
    expect(ofType(s, 'AWS::EC2::SecurityGroupIngress').map(([, r]) => r.Properties)).toEqual([
      { Description: 'The runner', FromPort: 3128, GroupId: proxySg, IpProtocol: 'tcp', SourceSecurityGroupId: runnerSg, ToPort: 3128 },
    ]);
    expect(propsOf(s, s.stack.egressProxy!.securityGroup).SecurityGroupIngress).toBeUndefined();
  });

  it('hands the proxy URL to the runner and the signing key to the API and cron functions only', () => {
    expect(propsOf(s, s.stack.runner.fn).Environment.Variables).toEqual({
      STRATUS_EGRESS: 'proxy',
      STRATUS_EGRESS_PROXY: 'http://egress.stratus-dev.internal:3128',
    });
    const key = ref(s.id(s.stack.egressProxy!.tokenKey));
    for (const engine of [s.stack.api, s.stack.cron]) {
      const env = propsOf(s, engine.fn).Environment.Variables;
      expect([env.STRATUS_EGRESS, env.STRATUS_EGRESS_KEY_SECRET]).toEqual(['proxy', key]);
      const reads = statementsOf(s.template, s.id(engine.role)).filter((st) => JSON.stringify(st.Resource) === JSON.stringify(key));
      expect(reads.map((st) => st.Action)).toEqual([['secretsmanager:GetSecretValue', 'secretsmanager:DescribeSecret']]);
    }
    const runnerPolicies = JSON.stringify(statementsOf(s.template, s.id(s.stack.runner.role)));
    expect(runnerPolicies).not.toContain(s.id(s.stack.egressProxy!.tokenKey));
  });
});
