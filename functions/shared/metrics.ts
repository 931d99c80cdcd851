import type { Logger } from './logger.ts';

export type MetricUnit = 'Milliseconds' | 'Count' | 'None';

/**
 * Metrics the Lambda way: a log line in CloudWatch Embedded Metric Format, which CloudWatch
 * turns into metrics with no agent and no API call. Locally it is just another JSON log line.
 */
export function emitMetrics(log: Logger, metrics: Record<string, { value: number; unit: MetricUnit }>, namespace = 'Stratus'): void {
  const values = Object.fromEntries(Object.entries(metrics).map(([name, m]) => [name, m.value]));
  log.info('metrics', {
    _aws: {
      Timestamp: Date.now(),
      CloudWatchMetrics: [{ Namespace: namespace, Dimensions: [[]], Metrics: Object.entries(metrics).map(([Name, m]) => ({ Name, Unit: m.unit })) }],
    },
    ...values,
  });
}
