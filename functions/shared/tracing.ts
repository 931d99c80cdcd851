/**
 * X-Ray tracing as the harness sees it. In Lambda the Powertools tracer stands behind it
 * (functions/handlers/xray-tracing.ts); locally, and wherever tracing is off, NO_TRACING does
 * nothing and loads nothing.
 */
export interface Span {
  annotate(key: string, value: string | number | boolean): void;
  /** Closes the span, marked as failed when `error` is given. */
  end(error?: unknown): void;
}

export interface Tracing {
  /** An AWS SDK v3 client whose every call is a subsegment. */
  captureClient<T>(client: T): T;
  /**
   * A subsegment of the invocation's segment, ended by the caller. It is not made the current
   * segment: work running beside it (tool calls during a model stream) is never nested under it.
   */
  startSpan(name: string): Span;
  /** Per invocation: the cold-start and service annotations. */
  startInvocation(): void;
}

const NO_SPAN: Span = { annotate: () => undefined, end: () => undefined };

export const NO_TRACING: Tracing = {
  captureClient: (client) => client,
  startSpan: () => NO_SPAN,
  startInvocation: () => undefined,
};
