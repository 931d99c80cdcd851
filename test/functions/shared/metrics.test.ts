import type { Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../functions/shared/logger.ts';
import { createMetrics } from '../../../functions/shared/metrics.ts';

describe('metrics (Powertools EMF)', () => {
  it('writes one Embedded Metric Format document per emit, with the service and stage dimensions', () => {
    const lines: string[] = [];
    const metrics = createMetrics({ namespace: 'Stratus', service: 'stratus-api', stage: 'prod', write: (l) => lines.push(l) });
    metrics.emit(
      { TurnDuration: { value: 1234, unit: 'Milliseconds' }, ModelCalls: { value: 3, unit: 'Count' } },
      { metadata: { sessionId: 'ses_1', turnId: 'turn_1' } },
    );
    metrics.emit({ ToolFailures: { value: 1, unit: 'Count' } }, { dimensions: { tool: 'Bash' } });
    const [turn, tool] = lines.map((l) => JSON.parse(l));
    expect(turn).toMatchObject({ service: 'stratus-api', stage: 'prod', sessionId: 'ses_1', turnId: 'turn_1', TurnDuration: 1234, ModelCalls: 3 });
    expect(turn._aws.CloudWatchMetrics).toEqual([
      {
        Namespace: 'Stratus',
        Dimensions: [['service', 'stage']],
        Metrics: [
          { Name: 'TurnDuration', Unit: 'Milliseconds' },
          { Name: 'ModelCalls', Unit: 'Count' },
        ],
      },
    ]);
    expect(Math.abs(turn._aws.Timestamp - Date.now())).toBeLessThan(60_000);
    // Extra dimensions and metadata belong to one document only.
    expect(tool).toMatchObject({ service: 'stratus-api', stage: 'prod', tool: 'Bash', ToolFailures: 1 });
    expect(tool).not.toHaveProperty('sessionId');
    expect(tool._aws.CloudWatchMetrics[0].Dimensions).toEqual([['service', 'stage', 'tool']]);
  });
});

describe('logger (Powertools)', () => {
  const lambdaContext = {
    functionName: 'stratus-dev-api',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:stratus-dev-api',
    memoryLimitInMB: '1024',
    awsRequestId: 'req-1',
    logGroupName: 'g',
    logStreamName: 's',
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: () => 1_000,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  } as unknown as Context;

  it('carries bound keys on every line of a child, and the invocation context and correlation id once told', () => {
    const lines: Record<string, unknown>[] = [];
    // Lambda sets this for on-demand environments; Powertools reports cold starts only there.
    process.env.AWS_LAMBDA_INITIALIZATION_TYPE = 'on-demand';
    const log = createLogger({ level: 'info', service: 'stratus-api', context: { stage: 'dev' }, write: (l) => lines.push(JSON.parse(l)) });
    delete process.env.AWS_LAMBDA_INITIALIZATION_TYPE;
    log.child({ sessionId: 'ses_1', tenantId: 'acme' }).child({ turnId: 'turn_1' }).warn('model call failed; retrying', { attempt: 2 });
    log.debug('not at info');
    log.startInvocation({ context: lambdaContext, correlationId: 'url-request-1' });
    log.child({ sessionId: 'ses_2' }).info('turn ended');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({
      level: 'WARN',
      message: 'model call failed; retrying',
      service: 'stratus-api',
      stage: 'dev',
      sessionId: 'ses_1',
      tenantId: 'acme',
      turnId: 'turn_1',
      attempt: 2,
    });
    expect(lines[1]).toMatchObject({
      level: 'INFO',
      message: 'turn ended',
      sessionId: 'ses_2',
      cold_start: true,
      function_name: 'stratus-dev-api',
      function_request_id: 'req-1',
      correlation_id: 'url-request-1',
    });
    expect(typeof lines[1]!.timestamp).toBe('string');
    // The next invocation of the same environment is warm, for children made in it too.
    expect(log.startInvocation({ context: { ...lambdaContext, awsRequestId: 'req-2' } })).toEqual({ coldStart: false });
    log.child({ sessionId: 'ses_3' }).info('warm');
    expect(lines[2]).toMatchObject({ message: 'warm', cold_start: false, function_request_id: 'req-2' });
  });

  it('logs a sampled invocation at debug whatever the level', () => {
    const lines: Record<string, unknown>[] = [];
    const log = createLogger({ level: 'warn', sampleRate: 1, write: (l) => lines.push(JSON.parse(l)) });
    log.startInvocation({});
    log.debug('sampled in');
    expect(lines.map((l) => [l.level, l.message])).toContainEqual(['DEBUG', 'sampled in']);
    expect(lines.find((l) => l.message === 'sampled in')?.sampling_rate).toBe(1);
  });
});
