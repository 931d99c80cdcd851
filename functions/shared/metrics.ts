import { Metrics as PowertoolsMetrics, type MetricUnit as PowertoolsUnits } from '@aws-lambda-powertools/metrics';

type PowertoolsUnit = (typeof PowertoolsUnits)[keyof typeof PowertoolsUnits];

export type MetricUnit = 'Milliseconds' | 'Count' | 'None';

/**
 * Metrics the Lambda way: CloudWatch Embedded Metric Format documents built by Powertools, one
 * JSON line each, which CloudWatch turns into metrics with no agent and no API call. They are
 * written apart from the logger, so no log level drops them. Every metric carries the `service`
 * and `stage` dimensions (dev and prod never mix in one namespace), plus any given per emit.
 */
export interface Metrics {
  emit(
    values: Record<string, { value: number; unit: MetricUnit }>,
    opts?: {
      /** Extra dimensions (e.g. `tool`): a separate CloudWatch metric per value. */
      dimensions?: Record<string, string>;
      /** Searchable properties of the document that are not dimensions (session and turn ids). */
      metadata?: Record<string, string | number | undefined>;
    },
  ): void;
}

export interface MetricsOptions {
  namespace: string;
  service: string;
  stage: string;
  /** Where documents go (default: a line on stdout, as Lambda ships it to CloudWatch Logs). */
  write?: (line: string) => void;
}

export function createMetrics(opts: MetricsOptions): Metrics {
  const metrics = new PowertoolsMetrics({ namespace: opts.namespace, serviceName: opts.service, defaultDimensions: { stage: opts.stage } });
  const write = opts.write ?? ((line: string) => process.stdout.write(`${line}\n`));
  return {
    emit(values, { dimensions, metadata } = {}) {
      // Synchronous from the first add to the clears: concurrent turns in one process never mix documents.
      if (dimensions) metrics.addDimensions(dimensions);
      for (const [key, value] of Object.entries(metadata ?? {})) if (value !== undefined) metrics.addMetadata(key, String(value));
      for (const [name, m] of Object.entries(values)) metrics.addMetric(name, m.unit as PowertoolsUnit, m.value);
      const document = metrics.serializeMetrics();
      metrics.clearMetrics();
      metrics.clearDimensions();
      metrics.clearMetadata();
      write(JSON.stringify(document));
    },
  };
}
