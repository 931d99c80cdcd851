import type { Span as OtelSpan, Context } from '@opentelemetry/api';
import type { StratusConfig } from '../deps/config.ts';
import { combineTracing, type Span, type SpanAttributes, type Tracing } from '../shared/tracing.ts';

export interface OtlpSettings {
  /** The collector's OTLP/HTTP traces URL (JSON encoding), e.g. `http://collector:4318/v1/traces`. */
  tracesEndpoint: string;
  /** Sent with every export (a collector's auth header). */
  headers: Record<string, string>;
  /** `service.name` of the resource: the function (`stratus-api`, `stratus-cron`, …). */
  service: string;
  /** `deployment.environment.name`: the stage. */
  stage: string;
}

/**
 * OpenTelemetry behind the harness's Tracing, exporting over OTLP/HTTP to the collector the
 * operator names (STRATUS_OTEL_TRACES_ENDPOINT). Loaded only then: its packages stay off the
 * cold start of a deployment that does not trace this way. Parenting follows the async call
 * chain through an AsyncLocalStorage context of this tracer's own (no global is registered, so
 * several stacks in one process never mix their traces).
 */
export async function createOtelTracing(settings: OtlpSettings): Promise<Tracing> {
  const [
    { trace, SpanStatusCode, ROOT_CONTEXT },
    { AsyncLocalStorageContextManager },
    { TracerProvider, BatchSpanProcessor },
    { OTLPTraceExporter },
    { resourceFromAttributes },
  ] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/context-async-hooks'),
    import('@opentelemetry/sdk-trace'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
  ]);
  const contexts = new AsyncLocalStorageContextManager().enable();
  const exporter = new OTLPTraceExporter({ url: settings.tracesEndpoint, headers: settings.headers });
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': settings.service, 'deployment.environment.name': settings.stage }),
    spanProcessors: [new BatchSpanProcessor({ exporter })],
  });
  const tracer = provider.getTracer('stratus');
  const underlying = new WeakMap<Span, OtelSpan>();
  const active = (): Context => contexts.active() ?? ROOT_CONTEXT;
  return {
    captureClient: (client) => client,
    startSpan(name, attributes = {}): Span {
      const otel = tracer.startSpan(name, { attributes: definedAttributes(attributes) }, active());
      const span: Span = {
        annotate: (key, value) => void otel.setAttribute(key, value),
        end(error) {
          if (error !== undefined) {
            otel.recordException(error instanceof Error ? error : String(error));
            otel.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
          }
          otel.end();
        },
      };
      underlying.set(span, otel);
      return span;
    },
    inSpan(span, fn) {
      const otel = underlying.get(span);
      return otel ? contexts.with(trace.setSpan(active(), otel), fn) : fn();
    },
    startInvocation: () => undefined,
    flush: () => provider.forceFlush(),
  };
}

function definedAttributes(attributes: SpanAttributes): Record<string, string | number | boolean> {
  return Object.fromEntries(Object.entries(attributes).filter((entry): entry is [string, string | number | boolean] => entry[1] !== undefined));
}

/** `base` joined by OpenTelemetry when the config names a collector; `base` alone otherwise. */
export async function withOtlpExport(base: Tracing, config: Pick<StratusConfig, 'observability'>): Promise<Tracing> {
  const { otlpTracesEndpoint, otlpHeaders, service, stage } = config.observability;
  if (otlpTracesEndpoint === undefined) return base;
  return combineTracing(base, await createOtelTracing({ tracesEndpoint: otlpTracesEndpoint, headers: otlpHeaders, service, stage }));
}
