import type { Tracing } from '../functions/shared/tracing.ts';

/**
 * Where a round trip's time goes, from the product's own observability: the Tracing hook
 * (every AWS SDK call of the harness is a span, as in X-Ray; each model call is the `model`
 * span) and the runner's metrics (RunnerCallDuration split into sync / op / publish by the
 * runner). For each window (end of a response → next request) it reports how much of the window
 * each phase covered; phases may overlap (an event write beside a tool), and what no span
 * covers is the harness's own work (turn loop, tool pipeline, context, serialisation).
 */
export const PHASES = [
  'ddb: message append',
  'ddb: session head',
  'ddb: events',
  'ddb: heartbeat',
  'ddb: other',
  's3',
  'runner: transport',
  'runner: sync',
  'runner: op',
  'runner: publish',
  'model: send',
  'uncovered (harness CPU)',
] as const;
export type Phase = (typeof PHASES)[number];

interface Span {
  phase: Phase;
  start: number;
  end: number;
}

/** The scripted model server stamps its exchanges with performance.now() too. */
const now = () => performance.now();

interface SdkArgs {
  input?: { TableName?: string; UpdateExpression?: string };
}
interface SdkClient {
  middlewareStack: {
    add(
      mw: (next: (args: SdkArgs) => Promise<unknown>, context: { clientName?: string }) => (args: SdkArgs) => Promise<unknown>,
      opts: { step: 'initialize'; name: string },
    ): void;
  };
}

export function createPhaseRecorder(tables: { messages: string; sessions: string; events: string }) {
  const spans: Span[] = [];
  const tracing: Tracing = {
    captureClient<T>(client: T): T {
      observeSdkCalls(client as unknown as SdkClient, tables, spans);
      return client;
    },
    startSpan(name) {
      const start = now();
      return { annotate: () => undefined, end: () => void (name === 'model' && spans.push({ phase: 'model: send', start, end: now() })) };
    },
    inSpan: (_span, fn) => fn(),
    startInvocation: () => undefined,
    flush: async () => undefined,
  };
  /** ms of [start, end] each phase covered (a model span only counts up to the request's arrival). */
  const breakdown = (start: number, end: number): Record<Phase, number> => {
    const out = Object.fromEntries(PHASES.map((p) => [p, 0])) as Record<Phase, number>;
    const covered: [number, number][] = [];
    for (const phase of PHASES) {
      const parts = spans
        .filter((s) => s.phase === phase && s.end > start && s.start < end)
        .map((s): [number, number] => [Math.max(s.start, start), Math.min(s.end, end)]);
      out[phase] = unionLength(parts);
      covered.push(...parts);
    }
    out['uncovered (harness CPU)'] = end - start - unionLength(covered);
    return out;
  };
  return { tracing, writeMetrics: (line: string) => runnerPhases(line, spans), breakdown, clear: () => void (spans.length = 0) };
}

/** Every DynamoDB and S3 call of the client as a span (Lambda Invoke is split with the runner's own figures instead). */
function observeSdkCalls(client: SdkClient, tables: { messages: string; sessions: string; events: string }, spans: Span[]): void {
  const ddbPhase = (input: SdkArgs['input']): Phase => {
    if (input?.TableName === tables.messages) return 'ddb: message append';
    if (input?.TableName === tables.events) return 'ddb: events';
    if (input?.TableName === tables.sessions) return input.UpdateExpression?.includes('heartbeatAt') ? 'ddb: heartbeat' : 'ddb: session head';
    return 'ddb: other';
  };
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const start = now();
      try {
        return await next(args);
      } finally {
        const name = context.clientName ?? '';
        const phase: Phase | undefined = name.startsWith('DynamoDB') ? ddbPhase(args.input) : name.startsWith('S3') ? 's3' : undefined;
        if (phase) spans.push({ phase, start, end: now() });
      }
    },
    { step: 'initialize', name: 'roundtripPhases' },
  );
}

/** A runner call's metrics as spans laid end to end back from the moment the call returned. */
function runnerPhases(line: string, spans: Span[]): void {
  const doc = JSON.parse(line) as Record<string, number>;
  if (doc.RunnerCallDuration === undefined || doc.RunnerOpDuration === undefined) return;
  let at = now();
  const back = (phase: Phase, ms: number) => {
    spans.push({ phase, start: at - ms, end: at });
    at -= ms;
  };
  const inside = doc.RunnerSyncDuration! + doc.RunnerOpDuration + doc.RunnerPublishDuration!;
  // The way back and the way there are one transport phase; the runner's phases sit between them.
  const transport = Math.max(0, doc.RunnerCallDuration - inside) / 2;
  back('runner: transport', transport);
  back('runner: publish', doc.RunnerPublishDuration!);
  back('runner: op', doc.RunnerOpDuration);
  back('runner: sync', doc.RunnerSyncDuration!);
  back('runner: transport', transport);
}

function unionLength(parts: [number, number][]): number {
  const sorted = [...parts].sort((a, b) => a[0] - b[0]);
  let total = 0;
  let curStart = -Infinity;
  let curEnd = -Infinity;
  for (const [s, e] of sorted) {
    if (s > curEnd) {
      if (curEnd > curStart) total += curEnd - curStart;
      curStart = s;
      curEnd = e;
    } else curEnd = Math.max(curEnd, e);
  }
  if (curEnd > curStart) total += curEnd - curStart;
  return total;
}
