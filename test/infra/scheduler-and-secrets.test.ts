import { beforeAll, describe, expect, it } from 'vitest';
import { actionsOf, statementsOf, synthStage, type Synthesized } from './synth-stack.ts';

describe('scheduler wiring and secrets', () => {
  let s: Synthesized;
  beforeAll(() => {
    s = synthStage('dev');
  });
  const scheduleArns = { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':scheduler:eu-west-1:123456789012:schedule/stratus-dev/*']] };

  it('keeps schedules in one group and lets Scheduler, for this account and group only, assume its role', () => {
    s.template.hasResourceProperties('AWS::Scheduler::ScheduleGroup', { Name: 'stratus-dev' });
    const role = s.template.findResources('AWS::IAM::Role')[s.id(s.stack.schedules.schedulerRole)]!.Properties;
    expect(role.AssumeRolePolicyDocument.Statement).toEqual([
      {
        Action: 'sts:AssumeRole',
        Effect: 'Allow',
        Principal: { Service: 'scheduler.amazonaws.com' },
        Condition: { StringEquals: { 'aws:SourceAccount': '123456789012' }, ArnLike: { 'aws:SourceArn': scheduleArns } },
      },
    ]);
  });

  it('lets the scheduler role invoke the cron function and nothing else', () => {
    expect(statementsOf(s.template, s.id(s.stack.schedules.schedulerRole))).toEqual([
      { Effect: 'Allow', Action: 'lambda:InvokeFunction', Resource: { 'Fn::GetAtt': [s.id(s.stack.cron.fn), 'Arn'] } },
    ]);
  });

  it('lets the API manage schedules in the group and pass the scheduler role to Scheduler only', () => {
    const api = statementsOf(s.template, s.id(s.stack.api.role));
    expect(api).toContainEqual({
      Effect: 'Allow',
      Action: ['scheduler:CreateSchedule', 'scheduler:UpdateSchedule', 'scheduler:DeleteSchedule', 'scheduler:GetSchedule'],
      Resource: scheduleArns,
    });
    expect(api.filter((st) => actionsOf(st).includes('iam:PassRole'))).toEqual([
      {
        Effect: 'Allow',
        Action: 'iam:PassRole',
        Resource: { 'Fn::GetAtt': [s.id(s.stack.schedules.schedulerRole), 'Arn'] },
        Condition: { StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } },
      },
    ]);
    const env = s.template.findResources('AWS::Lambda::Function')[s.id(s.stack.api.fn)]!.Properties.Environment.Variables;
    expect(env.STRATUS_SCHEDULE_GROUP).toBe('stratus-dev');
    expect(env.STRATUS_SCHEDULER_ROLE_ARN).toEqual({ 'Fn::GetAtt': [s.id(s.stack.schedules.schedulerRole), 'Arn'] });
    expect(env.STRATUS_CRON_FUNCTION_ARN).toEqual({ 'Fn::GetAtt': [s.id(s.stack.cron.fn), 'Arn'] });
  });

  it("lets every turn engine arm a question's one-time timeout (create only) that fires the cron function", () => {
    const github = synthStage('dev', (stage) => ({ ...stage, githubApp: true }));
    const cronArn = { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':lambda:eu-west-1:123456789012:function:stratus-dev-cron']] };
    for (const engine of [github.stack.cron, github.stack.githubWorker!]) {
      const statements = statementsOf(github.template, github.id(engine.role));
      // A timer deletes itself once it fired (ActionAfterCompletion); the engines' other schedule actions are an agent's CronCreate/CronDelete.
      expect(statements.filter((st) => actionsOf(st).includes('scheduler:CreateSchedule')).map((st) => st.Resource)).toEqual([scheduleArns]);
      expect(statements.filter((st) => actionsOf(st).includes('iam:PassRole'))).toEqual([
        {
          Effect: 'Allow',
          Action: 'iam:PassRole',
          Resource: { 'Fn::GetAtt': [github.id(github.stack.schedules.schedulerRole), 'Arn'] },
          Condition: { StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } },
        },
      ]);
      const env = github.template.findResources('AWS::Lambda::Function')[github.id(engine.fn)]!.Properties.Environment.Variables;
      expect(env.STRATUS_SCHEDULE_GROUP).toBe('stratus-dev');
      expect(env.STRATUS_SCHEDULER_ROLE_ARN).toEqual({ 'Fn::GetAtt': [github.id(github.stack.schedules.schedulerRole), 'Arn'] });
      expect(env.STRATUS_CRON_FUNCTION_ARN).toEqual(cronArn);
    }
    // No always-on timer: the only schedules in the template are none (each question makes its own at run time).
    expect(Object.keys(github.template.findResources('AWS::Scheduler::Schedule'))).toEqual([]);
  });

  it("lets the cron function, whose turns run an agent's CronCreate and retire one-shot schedules, manage schedules as the API does", () => {
    const cron = statementsOf(s.template, s.id(s.stack.cron.role));
    expect(cron).toContainEqual({
      Effect: 'Allow',
      Action: ['scheduler:CreateSchedule', 'scheduler:UpdateSchedule', 'scheduler:DeleteSchedule', 'scheduler:GetSchedule'],
      Resource: scheduleArns,
    });
    expect(cron.filter((st) => actionsOf(st).includes('iam:PassRole')).map((st) => st.Condition)).toEqual([
      { StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } },
    ]);
    const env = s.template.findResources('AWS::Lambda::Function')[s.id(s.stack.cron.fn)]!.Properties.Environment.Variables;
    expect(env.STRATUS_SCHEDULE_GROUP).toBe('stratus-dev');
    expect(env.STRATUS_SCHEDULER_ROLE_ARN).toEqual({ 'Fn::GetAtt': [s.id(s.stack.schedules.schedulerRole), 'Arn'] });
    expect(JSON.stringify(env.STRATUS_CRON_FUNCTION_ARN)).toContain(':function:stratus-dev-cron');
  });

  it('keeps only the secrets of configured features, readable by the roles that use them', () => {
    const names = Object.values(s.template.findResources('AWS::SecretsManager::Secret'))
      .map((r) => r.Properties.Name)
      .sort();
    // No GitHub App configured: its two secrets do not exist (they would cost 0.80 USD a month unused).
    expect(names).toEqual(['stratus-dev/anthropic-api-key', 'stratus-dev/api-tokens']);
    const readable = (synth: Synthesized, role: string) =>
      statementsOf(synth.template, role)
        .filter((st) => actionsOf(st).includes('secretsmanager:GetSecretValue'))
        .map((st) => st.Resource);
    const ref = (synth: Synthesized, secret: { node: { defaultChild?: unknown } } | undefined) => ({ Ref: synth.id(secret!) });
    const { anthropicApiKey, apiTokens } = s.stack.secrets;
    expect(readable(s, s.id(s.stack.api.role))).toEqual([ref(s, anthropicApiKey), ref(s, apiTokens)]);
    expect(readable(s, s.id(s.stack.cron.role))).toEqual([ref(s, anthropicApiKey), ref(s, apiTokens)]);
    expect(readable(s, s.id(s.stack.runner.role))).toEqual([]);

    const github = synthStage('dev', (stage) => ({ ...stage, githubApp: true }));
    const { githubAppPrivateKey, githubWebhookSecret } = github.stack.secrets;
    expect(
      Object.values(github.template.findResources('AWS::SecretsManager::Secret'))
        .map((r) => r.Properties.Name)
        .sort(),
    ).toEqual(['stratus-dev/anthropic-api-key', 'stratus-dev/api-tokens', 'stratus-dev/github-app-private-key', 'stratus-dev/github-webhook-secret']);
    const secretsOf = (role: string) => readable(github, role);
    const g = (secret: { node: { defaultChild?: unknown } } | undefined) => ref(github, secret);
    // The API verifies webhooks; only the GitHub worker reads the App's private key.
    expect(secretsOf(github.id(github.stack.api.role))).toEqual([
      g(github.stack.secrets.anthropicApiKey),
      g(github.stack.secrets.apiTokens),
      g(githubWebhookSecret),
    ]);
    expect(secretsOf(github.id(github.stack.githubWorker!.role))).toEqual([
      g(github.stack.secrets.anthropicApiKey),
      g(github.stack.secrets.apiTokens),
      g(githubAppPrivateKey),
    ]);
    expect(secretsOf(github.id(github.stack.cron.role))).toHaveLength(2);
    // Without the App, there is no worker at all.
    expect(s.stack.githubWorker).toBeUndefined();
  });
});
