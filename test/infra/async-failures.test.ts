import { beforeAll, describe, expect, it } from 'vitest';
import { actionsOf, statementsOf, synthStage, type Synthesized } from './synth-stack.ts';

/** What the template gives failed asynchronous work, bursts and traces (issue-found settings). */
describe('failed async work, concurrency and tracing in the template', () => {
  let s: Synthesized;
  const arnOf = (construct: { node: { defaultChild?: unknown } }) => ({ 'Fn::GetAtt': [s.id(construct), 'Arn'] });

  beforeAll(() => {
    s = synthStage('prod', (stage) => ({ ...stage, githubApp: true }));
  });

  it('sends every failed asynchronous invocation to the async-failures queue, with no blind retry', () => {
    const configs = Object.values(s.template.findResources('AWS::Lambda::EventInvokeConfig')).map((r) => r.Properties);
    const byFunction = Object.fromEntries(configs.map((c) => [JSON.stringify(c.FunctionName), c]));
    for (const fn of [s.stack.api.fn, s.stack.githubWorker!.fn]) {
      expect(byFunction[JSON.stringify({ Ref: s.id(fn) })], fn.node.path).toMatchObject({
        MaximumRetryAttempts: 0,
        DestinationConfig: { OnFailure: { Destination: arnOf(s.stack.asyncFailures.queue) } },
      });
    }
    expect(configs).toHaveLength(2);
    s.template.hasResourceProperties('AWS::SQS::Queue', {
      QueueName: 'stratus-prod-async-failures',
      MessageRetentionPeriod: 14 * 24 * 3600,
      SqsManagedSseEnabled: true,
    });
    s.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'stratus-prod-asyncFailures',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Threshold: 1,
      AlarmActions: [{ Ref: s.id(s.stack.alarms.topic) }],
    });
  });

  it('lets the API function alone read, release and delete the queue messages (the redrive), and tells it the queue', () => {
    const queueArn = arnOf(s.stack.asyncFailures.queue);
    const readers = [s.stack.api, s.stack.cron, s.stack.githubWorker!, s.stack.runner].map((fn) => ({
      fn,
      sqs: statementsOf(s.template, s.id(fn.role)).filter((st) =>
        actionsOf(st).some((a) => ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:ChangeMessageVisibility'].includes(a)),
      ),
    }));
    expect(readers[0]!.sqs).toEqual([
      { Effect: 'Allow', Action: ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:ChangeMessageVisibility'], Resource: queueArn },
    ]);
    for (const other of readers.slice(1)) expect(other.sqs, other.fn.fn.node.path).toEqual([]);
    const apiFn = s.template.findResources('AWS::Lambda::Function')[s.id(s.stack.api.fn)]!;
    expect(apiFn.Properties.Environment.Variables.STRATUS_ASYNC_FAILURES_QUEUE_URL).toEqual({ Ref: s.id(s.stack.asyncFailures.queue) });
  });

  it('keeps alarm notifications the e-mail subscription cannot deliver, in a queue only the topic may send to', () => {
    s.template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      RedrivePolicy: { deadLetterTargetArn: arnOf(s.stack.alarms.deliveryFailures) },
    });
    const policies = Object.values(s.template.findResources('AWS::SQS::QueuePolicy')).filter((p) =>
      JSON.stringify(p.Properties.Queues).includes(s.id(s.stack.alarms.deliveryFailures)),
    );
    const statements = policies.flatMap((p) => p.Properties.PolicyDocument.Statement as Record<string, unknown>[]).filter((st) => st.Effect === 'Allow');
    expect(statements).toEqual([
      {
        Action: 'sqs:SendMessage',
        Effect: 'Allow',
        Principal: { Service: 'sns.amazonaws.com' },
        Resource: arnOf(s.stack.alarms.deliveryFailures),
        Condition: { ArnEquals: { 'aws:SourceArn': { Ref: s.id(s.stack.alarms.topic) } } },
      },
    ]);
  });

  it('reserves concurrency for the runner in prod and traces the turn functions and the runner with X-Ray', () => {
    s.template.hasResourceProperties('AWS::Lambda::Function', { FunctionName: 'stratus-prod-tenant-runner', ReservedConcurrentExecutions: 200 });
    const functions = s.template.findResources('AWS::Lambda::Function');
    for (const fn of [s.stack.api.fn, s.stack.cron.fn, s.stack.githubWorker!.fn, s.stack.runner.fn]) {
      expect(functions[s.id(fn)]!.Properties.TracingConfig, fn.node.path).toEqual({ Mode: 'Active' });
    }
  });
});
