import { APIError } from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { configSchema } from '../../../functions/deps/config.ts';
import { createModelClient } from '../../../functions/handlers/model-client.ts';
import { callModel, type ModelCallEvent } from '../../../functions/model/model-call.ts';
import type { ModelClient } from '../../../functions/model/model-client.ts';
import { startScriptedModelServer, type ScriptedModelServer } from '../../../local/scripted-model/server.ts';
import type { ScriptedResponse } from '../../../local/scripted-model/script.ts';

/**
 * The model call through each provider's real SDK client, built by the composition root's
 * createModelClient, against the scripted model server: the Messages API over SSE, and Bedrock
 * Runtime's InvokeModelWithResponseStream in event-stream frames (SigV4-signed). The same
 * scripts drive both, so streaming, retries, fallback and tombstones behave the same.
 */
const PRIMARY = { anthropic: 'claude-primary', bedrock: 'us.anthropic.claude-primary-v1:0' };
const FALLBACK = { anthropic: 'claude-fallback', bedrock: 'global.anthropic.claude-fallback' };
const overloaded: ScriptedResponse = { error: { status: 529, type: 'overloaded_error', message: 'Overloaded' } };

describe.each(['anthropic', 'bedrock'] as const)('callModel through the %s client', (provider) => {
  let server: ScriptedModelServer;
  let client: ModelClient;
  beforeAll(async () => {
    server = await startScriptedModelServer();
    client = createModelClient({
      region: 'eu-west-1',
      localCredentials: { accessKeyId: 'AKIDSTANDIN', secretAccessKey: 'secret' },
      endpoints: provider === 'bedrock' ? { bedrock: server.url } : {},
      model: configSchema.shape.model.parse(provider === 'bedrock' ? { provider } : { provider, apiKey: 'sk-standin', baseURL: server.url }),
    });
  });
  afterAll(() => server.close());

  const run = async (maxRetries = 5) => {
    const events: ModelCallEvent[] = [];
    const sleep = vi.fn(async () => undefined);
    const request = {
      model: PRIMARY[provider],
      max_tokens: 100,
      system: 'be brief',
      tools: [{ name: 'Read', input_schema: { type: 'object' as const, properties: { file_path: { type: 'string' } } } }],
      messages: [{ role: 'user' as const, content: 'read it' }],
    };
    const before = server.requests.length;
    try {
      for await (const e of callModel({
        client,
        request,
        signal: new AbortController().signal,
        maxRetries,
        baseDelayMs: 100,
        fallbackModel: FALLBACK[provider],
        sleep,
      }))
        events.push(e);
      return { events, sleep, sent: server.requests.slice(before) };
    } catch (err) {
      return { events, sleep, sent: server.requests.slice(before), err };
    }
  };

  it('streams text as it arrives, a tool_use the moment its block closes, then the message with usage', async () => {
    server.enqueue({
      content: [
        { type: 'text', text: 'I will read the file you named for you now.' },
        { type: 'tool_use', id: 'toolu_1', name: 'Read', input: { file_path: '/workspace/a.txt' } },
      ],
      usage: { input_tokens: 321, output_tokens: 45 },
    });
    const { events, sent, err } = await run();
    expect(err).toBeUndefined();
    expect(events.map((e) => e.type)).toEqual(['text_delta', 'text_delta', 'tool_use', 'message']);
    expect(
      events
        .filter((e) => e.type === 'text_delta')
        .map((e) => e.text)
        .join(''),
    ).toBe('I will read the file you named for you now.');
    expect(events[2]).toMatchObject({ type: 'tool_use', block: { id: 'toolu_1', name: 'Read', input: { file_path: '/workspace/a.txt' } } });
    const last = events.at(-1);
    expect(last?.type === 'message' && last.response).toMatchObject({ stopReason: 'tool_use', usage: { inputTokens: 321, outputTokens: 45 } });
    // One request, to the model named in the path on Bedrock, with the prompt-cache breakpoints.
    expect(sent).toHaveLength(1);
    expect(sent[0]!.body.model).toBe(PRIMARY[provider]);
    const wire = JSON.parse(sent[0]!.raw) as Record<string, unknown>;
    expect(wire.system).toEqual([{ type: 'text', text: 'be brief', cache_control: { type: 'ephemeral' } }]);
    expect(JSON.stringify(wire.messages)).toContain('"cache_control":{"type":"ephemeral"}');
    if (provider === 'bedrock') {
      expect(wire).not.toHaveProperty('model');
      expect(wire).toHaveProperty('anthropic_version');
      expect(sent[0]!.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDSTANDIN\/\d{8}\/eu-west-1\/bedrock\/aws4_request/);
    } else {
      expect(sent[0]!.authorization).toContain('sk-standin');
    }
  });

  it('retries an overloaded answer with backoff and then streams the message', async () => {
    server.enqueue(overloaded, { content: [{ type: 'text', text: 'fine now' }] });
    const { events, sleep, sent, err } = await run();
    expect(err).toBeUndefined();
    expect(sent).toHaveLength(2);
    expect(events.map((e) => e.type)).toEqual(['retry', 'text_delta', 'message']);
    // Bedrock says "overloaded" as a 503 ServiceUnavailableException.
    expect(events[0]).toMatchObject({ type: 'retry', attempt: 1, status: provider === 'bedrock' ? 503 : 529 });
    expect(sleep).toHaveBeenCalledTimes(1);
  });

  it('moves to the fallback model after three overloaded answers in a row', async () => {
    server.enqueue(overloaded, overloaded, overloaded, { content: [{ type: 'text', text: 'from the fallback' }] });
    const { events, sent, err } = await run();
    expect(err).toBeUndefined();
    expect(events.map((e) => e.type)).toEqual(['retry', 'retry', 'fallback', 'retry', 'text_delta', 'message']);
    expect(events[2]).toEqual({ type: 'fallback', from: PRIMARY[provider], to: FALLBACK[provider] });
    expect(sent.map((r) => r.body.model)).toEqual([PRIMARY[provider], PRIMARY[provider], PRIMARY[provider], FALLBACK[provider]]);
  });

  it('tombstones what arrived before an error inside the stream, then retries to a whole message', async () => {
    server.enqueue(
      { content: [{ type: 'text', text: 'y'.repeat(60) }], errorAfterEvents: { after: 4, status: 529, type: 'overloaded_error', message: 'Overloaded' } },
      { content: [{ type: 'text', text: 'whole' }] },
    );
    const { events, err } = await run();
    expect(err).toBeUndefined();
    expect(events.map((e) => e.type)).toEqual(['text_delta', 'text_delta', 'tombstone', 'retry', 'text_delta', 'message']);
    expect(events[2]).toMatchObject({ type: 'tombstone', content: [{ type: 'text', text: 'y'.repeat(48) }] });
  });

  it('tombstones a stream whose connection drops, then retries', async () => {
    server.enqueue({ content: [{ type: 'text', text: 'z'.repeat(60) }], breakAfterEvents: 3, delayMs: 5 }, { content: [{ type: 'text', text: 'again' }] });
    const { events, err } = await run();
    expect(err).toBeUndefined();
    expect(events.map((e) => e.type)).toEqual(['text_delta', 'tombstone', 'retry', 'text_delta', 'message']);
  });

  it('throws a client error once, without retrying', async () => {
    server.enqueue({ error: { status: 400, type: 'invalid_request_error', message: 'messages: at least one message is required' } });
    const { events, sent, err } = await run();
    expect(sent).toHaveLength(1);
    expect(events).toEqual([]);
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).status).toBe(400);
    expect((err as APIError).message).toContain('at least one message is required');
  });

  it('gives up after its retries with the last error', async () => {
    server.enqueue(
      { error: { status: 429, type: 'rate_limit_error', message: 'slow down' } },
      { error: { status: 429, type: 'rate_limit_error', message: 'slow down' } },
    );
    const { events, sent, err } = await run(1);
    expect(sent).toHaveLength(2);
    expect(events.map((e) => e.type)).toEqual(['retry']);
    expect((err as APIError).status).toBe(429);
  });
});
