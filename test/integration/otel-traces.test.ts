import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unscripted, useLocalStack } from '../support/stack-fixture.ts';
import { until } from '../support/until.ts';

interface OtlpValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: number | string;
  doubleValue?: number;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: { key: string; value: OtlpValue }[];
}
interface OtlpRequest {
  resourceSpans: { resource: { attributes: { key: string; value: OtlpValue }[] }; scopeSpans: { spans: OtlpSpan[] }[] }[];
}

/** A collector on loopback: what arrives at /v1/traces, as OTLP/HTTP JSON. */
async function startOtlpReceiver(): Promise<{ url: string; requests: OtlpRequest[]; headers: Record<string, unknown>[]; close(): Promise<void> }> {
  const requests: OtlpRequest[] = [];
  const headers: Record<string, unknown>[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.url === '/v1/traces') {
        requests.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpRequest);
        headers.push(req.headers);
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/v1/traces`, requests, headers, close: () => new Promise((r) => server.close(() => r())) };
}

const value = (v: OtlpValue) => v.stringValue ?? v.boolValue ?? (v.intValue !== undefined ? Number(v.intValue) : v.doubleValue);
const attributesOf = (span: OtlpSpan) => Object.fromEntries(span.attributes.map((a) => [a.key, value(a.value)]));

describe('OpenTelemetry traces over OTLP', () => {
  let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;
  beforeAll(async () => {
    receiver = await startOtlpReceiver();
  });
  afterAll(() => receiver?.close());
  const fx = useLocalStack(() => ({
    brain: unscripted,
    observability: { stage: 'otel-test', otlpTracesEndpoint: receiver.url, otlpHeaders: { authorization: 'Bearer collector-token' } },
  }));

  it("exports a turn's spans as a tree: turn → model calls and tool calls → the tool's runner op, with their attributes", async () => {
    const sessionId = await fx.api.createSession({ 'a.txt': 'alpha\n' });
    fx.stack.model!.enqueue(
      { content: [{ type: 'tool_use', id: 'toolu_otel_1', name: 'Bash', input: { command: 'cat a.txt' } }] },
      { content: [{ type: 'text', text: 'It says alpha.' }] },
    );
    const turn = (await fx.api.turn(sessionId, 'read a.txt')).json as { turnId: string; stopReason: string };
    expect(turn.stopReason).toBe('end_turn');

    // The turn's spans are flushed as it ends; find its turn span and everything in its trace.
    const spansOf = () => receiver.requests.flatMap((r) => r.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((s) => s.spans)));
    const turnSpan = await until(
      async () => spansOf().find((s) => s.name === 'turn' && attributesOf(s)['stratus.turn_id'] === turn.turnId),
      (found) => found !== undefined,
    );
    const trace = spansOf().filter((s) => s.traceId === turnSpan!.traceId);
    const children = (parent: OtlpSpan) => trace.filter((s) => s.parentSpanId === parent.spanId);

    expect(turnSpan!.parentSpanId || undefined).toBeUndefined();
    expect(attributesOf(turnSpan!)).toMatchObject({
      'stratus.session_id': sessionId,
      'stratus.tenant_id': 'local',
      'stratus.turn.continuation': false,
      'stratus.turn.stop_reason': 'end_turn',
    });
    const underTurn = children(turnSpan!);
    expect(underTurn.filter((s) => s.name === 'model')).toHaveLength(2);
    const tools = underTurn.filter((s) => s.name === 'tool');
    expect(tools.map(attributesOf)).toEqual([
      expect.objectContaining({
        'stratus.tool.name': 'Bash',
        'stratus.tool.use_id': 'toolu_otel_1',
        'stratus.session_id': sessionId,
        'stratus.tool.outcome': 'ok',
      }),
    ]);
    const ops = children(tools[0]!);
    expect(ops.map((s) => s.name)).toEqual(['runner_op']);
    expect(attributesOf(ops[0]!)).toMatchObject({ 'stratus.runner.op': 'bash', 'stratus.runner.ok': true, 'stratus.session_id': sessionId });
    // Nothing in the trace hangs loose: every span's parent is in it, up to the turn.
    for (const span of trace) if (span !== turnSpan) expect(trace.some((p) => p.spanId === span.parentSpanId)).toBe(true);

    const resource = receiver.requests[0]!.resourceSpans[0]!.resource;
    expect(Object.fromEntries(resource.attributes.map((a) => [a.key, value(a.value)]))).toMatchObject({
      'service.name': 'stratus-local',
      'deployment.environment.name': 'otel-test',
    });
    expect(receiver.headers[0]).toMatchObject({ authorization: 'Bearer collector-token', 'content-type': 'application/json' });
  });
});
