import type { Span, Tracing } from '../shared/tracing.ts';

/**
 * The Powertools tracer behind the harness's Tracing. Imported only where tracing is on (the
 * Lambda functions, which run with X-Ray active): the X-Ray SDK hooks every async operation of
 * the process once loaded, a cost the local stack does not pay.
 */
export async function createXRayTracing(service: string): Promise<Tracing> {
  const { Tracer } = await import('@aws-lambda-powertools/tracer');
  const tracer = new Tracer({ serviceName: service, enabled: true });
  return {
    captureClient: (client) => tracer.captureAWSv3Client(client),
    startSpan(name, attributes = {}): Span {
      const subsegment = tracer.getSegment()?.addNewSubsegment(name);
      if (!subsegment) return { annotate: () => undefined, end: () => undefined };
      for (const [key, value] of Object.entries(attributes)) if (value !== undefined) subsegment.addAnnotation(annotationKey(key), value);
      return {
        annotate: (key, value) => subsegment.addAnnotation(annotationKey(key), value),
        end(error) {
          if (error !== undefined) subsegment.addError(error instanceof Error ? error : new Error(String(error)));
          subsegment.close();
        },
      };
    },
    // Subsegments stay flat under the invocation's segment (see Tracing.startSpan).
    inSpan: (_span, fn) => fn(),
    startInvocation() {
      tracer.annotateColdStart();
      tracer.addServiceNameAnnotation();
    },
    // The X-Ray SDK sends each subsegment as it closes.
    flush: async () => undefined,
  };
}

/** X-Ray annotation keys are letters, digits and underscores (`stratus.session_id` → `stratus_session_id`). */
function annotationKey(key: string): string {
  return key.replace(/[^A-Za-z0-9_]/g, '_');
}
