import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { synthStage, type Synthesized } from './synth-stack.ts';

describe('Lambda functions', () => {
  let dev: Synthesized;
  let prod: Synthesized;
  beforeAll(() => {
    dev = synthStage('dev');
    prod = synthStage('prod');
  });

  it('serves the API through a Function URL in RESPONSE_STREAM mode', () => {
    dev.template.resourceCountIs('AWS::Lambda::Url', 1);
    dev.template.hasResourceProperties('AWS::Lambda::Url', {
      AuthType: 'NONE',
      InvokeMode: 'RESPONSE_STREAM',
      TargetFunctionArn: { 'Fn::GetAtt': [dev.id(dev.stack.api.fn), 'Arn'] },
    });
  });

  it('lets the public reach the API only through its URL, so nobody else can send it a continue_turn event', () => {
    const permissions = Object.values(dev.template.findResources('AWS::Lambda::Permission')).map((p) => p.Properties);
    const apiArn = { 'Fn::GetAtt': [dev.id(dev.stack.api.fn), 'Arn'] };
    expect(permissions.filter((p) => p.Principal === '*')).toEqual([
      { Action: 'lambda:InvokeFunctionUrl', FunctionName: apiArn, FunctionUrlAuthType: 'NONE', Principal: '*' },
      { Action: 'lambda:InvokeFunction', FunctionName: apiArn, InvokedViaFunctionUrl: true, Principal: '*' },
    ]);
  });

  it('runs the API and cron functions on Node 24, arm64, from esbuild-bundled ESM handlers', () => {
    for (const fn of [dev.stack.api.fn, dev.stack.cron.fn]) {
      const props = dev.template.findResources('AWS::Lambda::Function')[dev.id(fn)]!.Properties;
      expect(props.Runtime).toBe('nodejs24.x');
      expect(props.Architectures).toEqual(['arm64']);
      expect(props.Handler).toBe('index.handler');
      expect(props.TracingConfig).toEqual({ Mode: 'Active' });
    }
    const api = dev.template.findResources('AWS::Lambda::Function')[dev.id(dev.stack.api.fn)]!.Properties;
    expect(api.FunctionName).toBe('stratus-dev-api');
    expect(api.Timeout).toBe(900);
  });

  it('builds the runner from a container image, arm64, with 10 GB of /tmp and the stage memory', () => {
    for (const [s, memory] of [
      [dev, 2048],
      [prod, 4096],
    ] as const) {
      const props = s.template.findResources('AWS::Lambda::Function')[s.id(s.stack.runner.fn)]!.Properties;
      expect(props.PackageType).toBe('Image');
      expect(props.Runtime).toBeUndefined();
      expect(props.Architectures).toEqual(['arm64']);
      expect(props.EphemeralStorage).toEqual({ Size: 10_240 });
      expect(props.MemorySize).toBe(memory);
    }
  });

  it('runs the runner in per-tenant isolation mode, and only the runner', () => {
    for (const s of [dev, prod]) {
      const functions = s.template.findResources('AWS::Lambda::Function');
      const runner = functions[s.id(s.stack.runner.fn)]!.Properties;
      expect(runner.TenancyConfig).toEqual({ TenantIsolationMode: 'PER_TENANT' });
      // A new function name: the mode can only be set when a function is created.
      expect(runner.FunctionName).toBe(`stratus-${s === dev ? 'dev' : 'prod'}-tenant-runner`);
      const isolated = Object.entries(functions)
        .filter(([, f]) => f.Properties.TenancyConfig)
        .map(([id]) => id);
      expect(isolated).toEqual([s.id(s.stack.runner.fn)]);
    }
    // Lambda refuses tenant isolation together with a Function URL, provisioned concurrency or SnapStart.
    const runnerRef = { Ref: dev.id(dev.stack.runner.fn) };
    const runnerArn = { 'Fn::GetAtt': [dev.id(dev.stack.runner.fn), 'Arn'] };
    const urls = Object.values(dev.template.findResources('AWS::Lambda::Url'));
    // The API has one, so the check below looks at a real URL.
    expect(urls).toHaveLength(1);
    for (const url of urls) {
      expect([runnerRef, runnerArn]).not.toContainEqual(url.Properties.TargetFunctionArn);
    }
    const runner = dev.template.findResources('AWS::Lambda::Function')[dev.id(dev.stack.runner.fn)]!.Properties;
    expect(runner.SnapStart).toBeUndefined();
    const provisioned = Object.values(dev.template.findResources('AWS::Lambda::Alias')).filter((a) => a.Properties.ProvisionedConcurrencyConfig);
    expect(provisioned).toEqual([]);
  });

  it('does not retry a failed asynchronous continuation of the API function', () => {
    dev.template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: dev.id(dev.stack.api.fn) },
      MaximumRetryAttempts: 0,
    });
  });

  it('gives the turn functions names and ARNs, never secret values, in their environment', () => {
    const env = dev.template.findResources('AWS::Lambda::Function')[dev.id(dev.stack.api.fn)]!.Properties.Environment.Variables;
    expect(env.STRATUS_SESSIONS_TABLE).toBe('stratus-dev-sessions');
    expect(env.STRATUS_MESSAGES_TABLE).toBe('stratus-dev-messages');
    expect(env.STRATUS_ANTHROPIC_KEY_SECRET).toEqual({ Ref: dev.id(dev.stack.secrets.anthropicApiKey!) });
    expect(env.STRATUS_API_TOKENS_SECRET).toEqual({ Ref: dev.id(dev.stack.secrets.apiTokens) });
    expect(env.STRATUS_WORKSPACE_ROLE_ARN).toEqual({ 'Fn::GetAtt': [dev.id(dev.stack.workspaceAccess.role), 'Arn'] });
    expect(env.STRATUS_RUNNER_FUNCTION).toEqual({ Ref: dev.id(dev.stack.runner.fn) });
    expect(env).toMatchObject({
      STRATUS_STAGE: 'dev',
      POWERTOOLS_SERVICE_NAME: 'stratus-api',
      POWERTOOLS_METRICS_NAMESPACE: 'Stratus',
      POWERTOOLS_TRACE_ENABLED: 'true',
      POWERTOOLS_LOGGER_SAMPLE_RATE: '0',
    });
    const cron = dev.template.findResources('AWS::Lambda::Function')[dev.id(dev.stack.cron.fn)]!.Properties.Environment.Variables;
    expect(cron).toMatchObject({ STRATUS_STAGE: 'dev', POWERTOOLS_SERVICE_NAME: 'stratus-cron' });
    expect(Object.keys(env)).not.toContain('ANTHROPIC_API_KEY');
    expect(Object.keys(env)).not.toContain('STRATUS_API_TOKENS');
  });

  it('alarms on errors and throttles of every function', () => {
    for (const name of ['api', 'cron', 'runner']) {
      dev.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        AlarmName: `stratus-dev-${name}-errors`,
        MetricName: 'Errors',
        Namespace: 'AWS/Lambda',
        Threshold: 1,
      });
      dev.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        AlarmName: `stratus-dev-${name}-throttles`,
        MetricName: 'Throttles',
        Namespace: 'AWS/Lambda',
        Threshold: 1,
      });
    }
    dev.template.hasResourceProperties('AWS::CloudWatch::Alarm', { AlarmName: 'stratus-dev-schedule-target-errors', Dimensions: Match.anyValue() });
  });
});
