import { beforeAll, describe, expect, it } from 'vitest';
import { actionsOf, show, statementsOf, synthStage, type Synthesized } from './synth-stack.ts';

describe('least privilege', () => {
  let s: Synthesized;
  let roles: { api: string; cron: string; worker: string; runner: string; workspace: string; scheduler: string; purge: string };
  const bucketArn = () => ({ 'Fn::GetAtt': [s.id(s.stack.data.bucket), 'Arn'] });
  const objects = (prefix: string) => ({ 'Fn::Join': ['', [bucketArn(), `/${prefix}*`]] });

  beforeAll(() => {
    s = synthStage('prod', (stage) => ({ ...stage, githubApp: true }));
    roles = {
      api: s.id(s.stack.api.role),
      cron: s.id(s.stack.cron.role),
      worker: s.id(s.stack.githubWorker!.role),
      runner: s.id(s.stack.runner.role),
      workspace: s.id(s.stack.workspaceAccess.role),
      scheduler: s.id(s.stack.schedules.schedulerRole),
      purge: s.id(s.stack.sessionPurge.role),
    };
  });

  it('gives the runner role nothing but its logs, its traces and its VPC network interfaces: no S3, no tables', () => {
    expect(statementsOf(s.template, roles.runner)).toEqual([{ Effect: 'Allow', Action: ['xray:PutTraceSegments', 'xray:PutTelemetryRecords'], Resource: '*' }]);
    const role = s.template.findResources('AWS::IAM::Role')[roles.runner]!.Properties;
    expect(show(role.ManagedPolicyArns)).toBe(
      show([
        { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':iam::aws:policy/service-role/AWSLambdaBasicExecutionRole']] },
        { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole']] },
      ]),
    );
  });

  it('lets only the workspace-access role reach workspace objects and cached environment layers, and only under workspaces/ and environments/', () => {
    const s3Statements = statementsOf(s.template, roles.workspace).filter((st) => actionsOf(st).some((a) => a.startsWith('s3:')));
    expect(s3Statements).toEqual([
      { Effect: 'Allow', Action: ['s3:GetObject', 's3:PutObject'], Resource: [objects('workspaces/'), objects('environments/')] },
      { Effect: 'Allow', Action: 's3:DeleteObject', Resource: [objects('workspaces/'), objects('environments/')] },
      { Effect: 'Allow', Action: 's3:PutObjectTagging', Resource: objects('workspaces/') },
      { Effect: 'Allow', Action: 's3:ListBucket', Resource: bucketArn(), Condition: { StringLike: { 's3:prefix': ['workspaces/*', 'environments/*'] } } },
      // Cached layers are deleted version by version (the bucket is versioned).
      { Effect: 'Allow', Action: 's3:DeleteObjectVersion', Resource: objects('environments/') },
      { Effect: 'Allow', Action: 's3:ListBucketVersions', Resource: bucketArn(), Condition: { StringLike: { 's3:prefix': ['environments/*'] } } },
    ]);
    const others = [roles.api, roles.cron, roles.worker, roles.scheduler].flatMap((role) =>
      statementsOf(s.template, role).filter((x) => actionsOf(x).some((a) => a.startsWith('s3:'))),
    );
    // The API and cron roles hold S3 statements of their own: finding none would check nothing.
    expect(others.length).toBeGreaterThanOrEqual(2);
    for (const st of others) {
      expect(show(st.Resource)).not.toContain('workspaces/');
      expect(show(st.Resource)).not.toContain('environments/');
      expect(show(st.Resource)).not.toBe(show(objects('')));
    }
  });

  it('trusts the workspace-access role to the API, cron and GitHub worker roles by ARN, nobody else', () => {
    const trust = s.template.findResources('AWS::IAM::Role')[roles.workspace]!.Properties.AssumeRolePolicyDocument.Statement;
    expect(trust).toEqual([
      { Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { AWS: { 'Fn::GetAtt': [roles.api, 'Arn'] } } },
      { Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { AWS: { 'Fn::GetAtt': [roles.cron, 'Arn'] } } },
      { Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { AWS: { 'Fn::GetAtt': [roles.worker, 'Arn'] } } },
    ]);
  });

  it('gives list and delete in the bucket, versions included, to the session-purge role alone, which only the API role may assume', () => {
    const prefixes = ['tool-results/', 'spill/', 'workspaces/'];
    expect(statementsOf(s.template, roles.purge)).toEqual([
      {
        Effect: 'Allow',
        Action: ['s3:ListBucket', 's3:ListBucketVersions'],
        Resource: bucketArn(),
        Condition: { StringLike: { 's3:prefix': prefixes.map((p) => `${p}*`) } },
      },
      { Effect: 'Allow', Action: ['s3:DeleteObject', 's3:DeleteObjectVersion'], Resource: prefixes.map(objects) },
    ]);
    const trust = s.template.findResources('AWS::IAM::Role')[roles.purge]!.Properties.AssumeRolePolicyDocument.Statement;
    expect(trust).toEqual([{ Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { AWS: { 'Fn::GetAtt': [roles.api, 'Arn'] } } }]);
    const assumes = (role: string) => statementsOf(s.template, role).filter((st) => show(st.Resource) === show({ 'Fn::GetAtt': [roles.purge, 'Arn'] }));
    expect(assumes(roles.api).map((st) => st.Action)).toEqual(['sts:AssumeRole']);
    expect([...assumes(roles.cron), ...assumes(roles.worker)]).toEqual([]);
    const listOrDelete = (role: string) => statementsOf(s.template, role).filter((st) => actionsOf(st).some((a) => /^s3:(List|Delete)/.test(a)));
    for (const role of [roles.runner, roles.scheduler]) expect(listOrDelete(role)).toEqual([]);
    // The engines delete only egress grants (the mailbox mode's grant writer), never a workspace object.
    const grants = { Effect: 'Allow', Action: ['s3:PutObject', 's3:DeleteObject'], Resource: objects('egress-grants/') };
    for (const role of [roles.api, roles.cron, roles.worker]) expect(listOrDelete(role)).toEqual([grants]);
  });

  it('limits the turn functions to the harness prefixes of the bucket', () => {
    for (const role of [roles.api, roles.cron, roles.worker]) {
      const s3 = statementsOf(s.template, role).filter((st) => actionsOf(st).some((a) => a.startsWith('s3:')));
      expect(s3).toEqual([
        { Effect: 'Allow', Action: ['s3:GetObject', 's3:PutObject'], Resource: [objects('tool-results/'), objects('spill/')] },
        { Effect: 'Allow', Action: ['s3:PutObject', 's3:DeleteObject'], Resource: objects('egress-grants/') },
      ]);
    }
  });

  it('lets the API, cron and GitHub worker functions invoke the runner and the API (long-turn continuations), the API and cron the worker (a resumed GitHub run), and the worker the git function and itself (the run of a queued comment), nothing else', () => {
    const invokes = (role: string) =>
      statementsOf(s.template, role)
        .filter((st) => actionsOf(st).includes('lambda:InvokeFunction'))
        .map((st) => st.Resource);
    const runnerArn = { 'Fn::GetAtt': [s.id(s.stack.runner.fn), 'Arn'] };
    const apiArn = { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':lambda:eu-west-1:123456789012:function:stratus-prod-api']] };
    const workerArn = { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':lambda:eu-west-1:123456789012:function:stratus-prod-github-worker']] };
    expect(invokes(roles.api)).toEqual([runnerArn, workerArn, apiArn]);
    expect(invokes(roles.cron)).toEqual([runnerArn, workerArn, apiArn]);
    const gitArn = { 'Fn::GetAtt': [s.id(s.stack.gitFunction!.fn), 'Arn'] };
    expect(invokes(roles.worker)).toEqual([runnerArn, gitArn, workerArn, apiArn]);
  });

  it('grants no wildcard action anywhere, and Resource "*" only to X-Ray', () => {
    // The four roles with permissions must have their policies in the template, or the loop
    // below would check nothing.
    for (const role of [roles.api, roles.cron, roles.worker, roles.workspace, roles.scheduler])
      expect(statementsOf(s.template, role).length).toBeGreaterThan(0);
    const statements = Object.values(s.template.findResources('AWS::IAM::Policy')).flatMap((policy) => policy.Properties.PolicyDocument.Statement);
    for (const st of statements) {
      for (const action of actionsOf(st)) expect(action).not.toMatch(/(^\*$|:\*$)/);
      if (st.Resource === '*') expect(actionsOf(st)).toEqual(['xray:PutTraceSegments', 'xray:PutTelemetryRecords']);
    }
  });
});
