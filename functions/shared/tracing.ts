/**
 * Tracing as the harness sees it. In Lambda the Powertools tracer stands behind it (X-Ray:
 * functions/handlers/xray-tracing.ts); where the operator names an OTLP collector, OpenTelemetry
 * too (functions/handlers/otel-tracing.ts), the two joined by `combineTracing`. Locally, and
 * wherever tracing is off, NO_TRACING does nothing and loads nothing.
 */
export interface Span {
  annotate(key: string, value: string | number | boolean): void;
  /** Closes the span, marked as failed when `error` is given. */
  end(error?: unknown): void;
}

export type SpanAttributes = Record<string, string | number | boolean | undefined>;

export interface Tracing {
  /** An AWS SDK v3 client whose every call is a subsegment. */
  captureClient<T>(client: T): T;
  /**
   * A span under the current one (see `inSpan`), ended by the caller. It is not made current
   * itself: work running beside it (tool calls during a model stream) is never nested under it.
   */
  startSpan(name: string, attributes?: SpanAttributes): Span;
  /**
   * Runs `fn` with `span` as the parent of the spans started inside it (a turn's model and tool
   * calls, a tool call's runner ops). X-Ray keeps its subsegments flat and just runs `fn`.
   */
  inSpan<T>(span: Span, fn: () => Promise<T>): Promise<T>;
  /** Per invocation: the cold-start and service annotations. */
  startInvocation(): void;
  /** Sends the spans still buffered (before an invocation ends and its environment may freeze). */
  flush(): Promise<void>;
}

const NO_SPAN: Span = { annotate: () => undefined, end: () => undefined };

export const NO_TRACING: Tracing = {
  captureClient: (client) => client,
  startSpan: () => NO_SPAN,
  inSpan: (_span, fn) => fn(),
  startInvocation: () => undefined,
  flush: async () => undefined,
};

/** Both tracers at once (X-Ray and OpenTelemetry in AWS): each span is a span of each. */
export function combineTracing(first: Tracing, second: Tracing): Tracing {
  if (first === NO_TRACING) return second;
  if (second === NO_TRACING) return first;
  const pairs = new WeakMap<Span, [Span, Span]>();
  return {
    captureClient: (client) => second.captureClient(first.captureClient(client)),
    startSpan(name, attributes) {
      const pair: [Span, Span] = [first.startSpan(name, attributes), second.startSpan(name, attributes)];
      const span: Span = {
        annotate(key, value) {
          for (const s of pair) s.annotate(key, value);
        },
        end(error) {
          for (const s of pair) s.end(error);
        },
      };
      pairs.set(span, pair);
      return span;
    },
    inSpan(span, fn) {
      const pair = pairs.get(span);
      return pair ? first.inSpan(pair[0], () => second.inSpan(pair[1], fn)) : fn();
    },
    startInvocation() {
      first.startInvocation();
      second.startInvocation();
    },
    flush: async () => void (await Promise.all([first.flush(), second.flush()])),
  };
}

/** `fn` in a span of its own, made current for what it starts; the span ends with its outcome. */
export async function traced<T>(tracing: Tracing, name: string, attributes: SpanAttributes, fn: (span: Span) => Promise<T>): Promise<T> {
  const span = tracing.startSpan(name, attributes);
  try {
    const result = await tracing.inSpan(span, () => fn(span));
    span.end();
    return result;
  } catch (err) {
    span.end(err);
    throw err;
  }
}
