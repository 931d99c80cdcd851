import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../functions/shared/logger.ts';
import { emitMetrics } from '../../../functions/shared/metrics.ts';

describe('emitMetrics', () => {
  it('writes one CloudWatch Embedded Metric Format line carrying the bound session and turn ids', () => {
    const lines: string[] = [];
    const log = createLogger({ write: (l) => lines.push(l) }).child({ sessionId: 'ses_1', turnId: 'turn_1' });
    emitMetrics(log, { TurnDuration: { value: 1234, unit: 'Milliseconds' }, ModelCalls: { value: 3, unit: 'Count' } });
    const line = JSON.parse(lines[0]!);
    expect(line).toMatchObject({ msg: 'metrics', sessionId: 'ses_1', turnId: 'turn_1', TurnDuration: 1234, ModelCalls: 3 });
    expect(line._aws.CloudWatchMetrics).toEqual([
      { Namespace: 'Stratus', Dimensions: [[]], Metrics: [{ Name: 'TurnDuration', Unit: 'Milliseconds' }, { Name: 'ModelCalls', Unit: 'Count' }] },
    ]);
    expect(typeof line._aws.Timestamp).toBe('number');
  });
});
