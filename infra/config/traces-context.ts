import type { StageConfig } from './stages.ts';

/**
 * The OpenTelemetry export from `-c otelTracesEndpoint=https://collector.example.com/v1/traces`
 * (and optionally `-c otelHeaders=name=value,name=value`) over the stage's own `traces`. A
 * header list without an endpoint, or an endpoint that is not an http(s) URL, stops the synth:
 * the functions would refuse it at their first cold start instead.
 */
export function tracesFromContext(stage: StageConfig['traces'], endpoint: string | undefined, headers: string | undefined): StageConfig['traces'] {
  const otlpEndpoint = endpoint ?? stage?.otlpEndpoint;
  const otlpHeaders = headers ?? stage?.otlpHeaders;
  if (otlpEndpoint === undefined) {
    if (otlpHeaders !== undefined) throw new Error('-c otelHeaders (or traces.otlpHeaders) needs an endpoint: -c otelTracesEndpoint=<OTLP/HTTP traces URL>.');
    return undefined;
  }
  if (!/^https?:\/\/[^\s/]+/.test(otlpEndpoint)) throw new Error(`The OpenTelemetry endpoint must be an http(s) URL; got "${otlpEndpoint.slice(0, 100)}".`);
  for (const pair of (otlpHeaders ?? '').split(',').filter((p) => p.trim())) {
    if (pair.indexOf('=') <= 0) throw new Error(`-c otelHeaders takes "name=value" pairs separated by commas; got "${pair.slice(0, 40)}".`);
  }
  return { otlpEndpoint, ...(otlpHeaders ? { otlpHeaders } : {}) };
}

/** What the turn engines (API, cron, GitHub worker) are told of the export: the two settings of functions/deps/settings.ts. */
export function tracesEnvironment(traces: StageConfig['traces']): Record<string, string> {
  if (!traces) return {};
  return { STRATUS_OTEL_TRACES_ENDPOINT: traces.otlpEndpoint, ...(traces.otlpHeaders ? { STRATUS_OTEL_HEADERS: traces.otlpHeaders } : {}) };
}
