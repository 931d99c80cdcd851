import { beforeAll, describe, expect, it } from 'vitest';
import { synthStage, type Synthesized } from './synth-stack.ts';

describe('what an operator runs: alarms with an action, the dashboard, concurrency, CORS', () => {
  let dev: Synthesized;
  let prod: Synthesized;
  beforeAll(() => {
    dev = synthStage('dev');
    prod = synthStage('prod', (s) => ({ ...s, api: { ...s.api, corsOrigins: ['https://console.example.com'] } }));
  });

  it('sends every alarm and its recovery to one SNS topic, with an optional e-mail subscription from a parameter', () => {
    const topic = { Ref: dev.id(dev.stack.alarms.topic) };
    dev.template.hasResourceProperties('AWS::SNS::Topic', { TopicName: 'stratus-dev-alarms' });
    const alarms = Object.values(dev.template.findResources('AWS::CloudWatch::Alarm'));
    expect(alarms.length).toBe(8);
    for (const alarm of alarms) {
      expect(alarm.Properties.AlarmActions).toEqual([topic]);
      expect(alarm.Properties.OKActions).toEqual([topic]);
    }
    expect(dev.template.findParameters('AlarmEmail')).toMatchObject({ AlarmEmail: { Type: 'String', Default: '' } });
    const subscriptions = Object.values(dev.template.findResources('AWS::SNS::Subscription'));
    expect(subscriptions).toHaveLength(1);
    expect(subscriptions[0]).toMatchObject({
      Condition: expect.stringMatching(/HasAlarmEmail/),
      Properties: { Protocol: 'email', Endpoint: { Ref: 'AlarmEmail' }, TopicArn: topic },
    });
    // Only TLS publishers.
    const policy = Object.values(dev.template.findResources('AWS::SNS::TopicPolicy'))[0]!;
    expect(JSON.stringify(policy.Properties.PolicyDocument)).toContain('"aws:SecureTransport":"false"');
  });

  it('draws one dashboard per stage from the stage-scoped metrics', () => {
    const [dashboard] = Object.values(prod.template.findResources('AWS::CloudWatch::Dashboard'));
    expect(dashboard!.Properties.DashboardName).toBe('stratus-prod');
    const body = JSON.stringify(dashboard!.Properties.DashboardBody);
    for (const title of [
      'Turns (5 min)',
      'Model call latency (ms)',
      'Tool failures by tool (5 min)',
      'Runner calls (5 min)',
      'Lambda throttles and errors (5 min)',
      'Model cost per day (USD, upper bound)',
    ]) {
      expect(body).toContain(title);
    }
    for (const name of ['Turns', 'ModelCallDuration', 'ModelTimeToFirstEvent', 'RunnerColdSyncs', 'InputTokens', 'OutputTokens', 'Throttles'])
      expect(body).toContain(`\\"${name}\\"`);
    expect(body).toContain('MetricName=\\\\\\"ToolFailures\\\\\\" stage=\\\\\\"prod\\\\\\"');
    expect(body).toContain('\\"stage\\",\\"prod\\"');
    expect(body).not.toContain('\\"stage\\",\\"dev\\"');
    // The prices the cost line uses come from the stage (USD per million tokens).
    expect(body).toContain('(i * 3 + o * 15) / 1000000');
  });

  it('reserves concurrency where the stage says so, and leaves the pool alone where it does not', () => {
    const fns = (s: Synthesized) => s.template.findResources('AWS::Lambda::Function');
    expect(fns(prod)[prod.id(prod.stack.api.fn)]!.Properties.ReservedConcurrentExecutions).toBe(100);
    expect(fns(prod)[prod.id(prod.stack.cron.fn)]!.Properties.ReservedConcurrentExecutions).toBe(10);
    expect(fns(prod)[prod.id(prod.stack.runner.fn)]!.Properties.ReservedConcurrentExecutions).toBe(200);
    for (const fn of [dev.stack.api.fn, dev.stack.cron.fn, dev.stack.runner.fn])
      expect(fns(dev)[dev.id(fn)]!.Properties.ReservedConcurrentExecutions).toBeUndefined();
  });

  it('answers CORS on the Function URL only for the configured origins', () => {
    const url = (s: Synthesized) => Object.values(s.template.findResources('AWS::Lambda::Url'))[0]!.Properties;
    expect(url(prod)).toMatchObject({
      AuthType: 'NONE',
      InvokeMode: 'RESPONSE_STREAM',
      Cors: {
        AllowOrigins: ['https://console.example.com'],
        AllowMethods: ['*'],
        AllowHeaders: ['authorization', 'content-type', 'accept', 'last-event-id', 'idempotency-key', 'prefer', 'x-amz-content-sha256'],
        ExposeHeaders: ['retry-after'],
        MaxAge: 3600,
      },
    });
    expect(url(dev).Cors).toBeUndefined();
  });
});
