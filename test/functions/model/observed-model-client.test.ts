import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configSchema } from '../../../functions/deps/config.ts';
import { createModelClient } from '../../../functions/handlers/model-client.ts';
import { callModel } from '../../../functions/model/model-call.ts';
import { observeModelClient } from '../../../functions/model/observed-model-client.ts';
import { createMetrics } from '../../../functions/shared/metrics.ts';
import type { Tracing } from '../../../functions/shared/tracing.ts';
import { startScriptedModelServer, type ScriptedModelServer } from '../../../local/scripted-model/server.ts';

describe('the observed model client (Bedrock behind it)', () => {
  let server: ScriptedModelServer;
  beforeAll(async () => {
    server = await startScriptedModelServer();
  });
  afterAll(() => server.close());

  it('spans each call from request to last event and measures it, failures included', async () => {
    const spans: { name: string; annotations: Record<string, unknown>; ended?: { error: unknown } }[] = [];
    const tracing: Tracing = {
      captureClient: (c) => c,
      startInvocation: () => undefined,
      inSpan: (_span, fn) => fn(),
      flush: async () => undefined,
      startSpan(name) {
        const span: (typeof spans)[number] = { name, annotations: {} };
        spans.push(span);
        return { annotate: (k, v) => void (span.annotations[k] = v), end: (error) => void (span.ended = { error }) };
      },
    };
    const documents: Record<string, unknown>[] = [];
    const metrics = createMetrics({ namespace: 'Stratus', service: 'test', stage: 'unit', write: (l) => documents.push(JSON.parse(l)) });
    const inner = createModelClient({
      region: 'us-east-1',
      localCredentials: { accessKeyId: 'AKID', secretAccessKey: 's' },
      endpoints: { bedrock: server.url },
      model: configSchema.shape.model.parse({ provider: 'bedrock' }),
    });
    const client = observeModelClient(inner, { tracing, metrics, clock: Date.now });
    server.enqueue({ error: { status: 529, type: 'overloaded_error', message: 'Overloaded' } }, { content: [{ type: 'text', text: 'hello' }], delayMs: 5 });
    const types: string[] = [];
    for await (const e of callModel({
      client,
      request: { model: 'us.anthropic.m', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] },
      signal: new AbortController().signal,
      maxRetries: 2,
      baseDelayMs: 1,
    }))
      types.push(e.type);
    expect(types).toEqual(['retry', 'text_delta', 'message']);

    expect(spans.map((s) => [s.name, s.annotations.model, s.ended !== undefined, s.ended?.error !== undefined])).toEqual([
      ['model', 'us.anthropic.m', true, true],
      ['model', 'us.anthropic.m', true, false],
    ]);
    expect(documents.map((d) => [d.ModelCallErrors, d.model, 'ModelTimeToFirstEvent' in d])).toEqual([
      [1, 'us.anthropic.m', false],
      [0, 'us.anthropic.m', true],
    ]);
    const ok = documents[1] as { ModelCallDuration: number; ModelTimeToFirstEvent: number; stage: string };
    expect(ok.stage).toBe('unit');
    expect(ok.ModelCallDuration).toBeGreaterThanOrEqual(ok.ModelTimeToFirstEvent);
  });
});
