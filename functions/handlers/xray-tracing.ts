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
    startSpan(name): Span {
      const subsegment = tracer.getSegment()?.addNewSubsegment(name);
      if (!subsegment) return { annotate: () => undefined, end: () => undefined };
      return {
        annotate: (key, value) => subsegment.addAnnotation(key, value),
        end(error) {
          if (error !== undefined) subsegment.addError(error instanceof Error ? error : new Error(String(error)));
          subsegment.close();
        },
      };
    },
    startInvocation() {
      tracer.annotateColdStart();
      tracer.addServiceNameAnnotation();
    },
  };
}
