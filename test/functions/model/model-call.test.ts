import Anthropic, { APIConnectionError, APIError, APIUserAbortError } from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { callModel, isRetryable, retryDelayMs, withCacheBreakpoints, type ModelCallEvent } from '../../../functions/model/model-call.ts';
import type { ModelRequest } from '../../../functions/model/model-stream.ts';
import { startScriptedModelServer, type ScriptedModelServer } from '../../../local/scripted-model/server.ts';

const apiError = (status: number, type: string, headers: Record<string, string> = {}) =>
  APIError.generate(status, { type: 'error', error: { type, message: type } }, type, new Headers(headers));

describe('which failures are retried', () => {
  it('branches on the SDK error classes', () => {
    expect(isRetryable(apiError(529, 'overloaded_error'))).toBe(true);
    expect(isRetryable(apiError(429, 'rate_limit_error'))).toBe(true);
    expect(isRetryable(apiError(500, 'api_error'))).toBe(true);
    expect(isRetryable(apiError(503, 'api_error'))).toBe(true);
    expect(isRetryable(apiError(408, 'timeout_error'))).toBe(true);
    expect(isRetryable(new APIConnectionError({ message: 'Connection error.' }))).toBe(true);
    expect(isRetryable(apiError(400, 'invalid_request_error'))).toBe(false);
    expect(isRetryable(apiError(401, 'authentication_error'))).toBe(false);
    expect(isRetryable(apiError(413, 'request_too_large'))).toBe(false);
    expect(isRetryable(new APIUserAbortError())).toBe(false);
  });
  it('backs off exponentially, capped, and obeys retry-after', () => {
    vi.spyOn(Math, 'random').mockReturnValue(0);
    expect([1, 2, 3, 10].map((a) => retryDelayMs(a, 500, apiError(529, 'overloaded_error')))).toEqual([500, 1000, 2000, 32_000]);
    expect(retryDelayMs(1, 500, apiError(429, 'rate_limit_error', { 'retry-after': '7' }))).toBe(7000);
    vi.restoreAllMocks();
  });
});

describe('prompt-cache breakpoints', () => {
  it('marks the system prompt, the last tool and the newest block, without touching the input', () => {
    const request: ModelRequest = {
      model: 'm',
      max_tokens: 10,
      system: 'sys',
      tools: [
        { name: 'A', input_schema: { type: 'object' } },
        { name: 'B', input_schema: { type: 'object' } },
      ],
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'yo' },
        { role: 'user', content: [{ type: 'text', text: 'more' }] },
      ],
    };
    const before = JSON.stringify(request);
    const out = withCacheBreakpoints(request);
    expect(JSON.stringify(request)).toBe(before);
    expect(out.system).toEqual([{ type: 'text', text: 'sys', cache_control: { type: 'ephemeral' } }]);
    expect(out.tools!.map((t) => 'cache_control' in t)).toEqual([false, true]);
    expect(out.messages.slice(0, 2)).toEqual(request.messages.slice(0, 2));
    expect(out.messages[2]).toEqual({ role: 'user', content: [{ type: 'text', text: 'more', cache_control: { type: 'ephemeral' } }] });
  });
});

describe('callModel against the scripted server', () => {
  let server: ScriptedModelServer;
  let client: Anthropic;
  beforeAll(async () => {
    server = await startScriptedModelServer();
    client = new Anthropic({ apiKey: 'x', baseURL: server.url, maxRetries: 0 });
  });
  afterAll(() => server.close());

  const run = async (maxRetries: number) => {
    const events: ModelCallEvent[] = [];
    const sleep = vi.fn(async () => undefined);
    try {
      for await (const e of callModel({
        client,
        request: { model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] },
        signal: new AbortController().signal,
        maxRetries,
        baseDelayMs: 100,
        sleep,
      }))
        events.push(e);
      return { events, sleep };
    } catch (err) {
      return { events, sleep, err };
    }
  };

  it('is the only retrier: one HTTP request per attempt, then the error once retries run out', async () => {
    const before = server.requests.length;
    server.enqueue(
      { error: { status: 529, type: 'overloaded_error', message: 'Overloaded' } },
      { error: { status: 529, type: 'overloaded_error', message: 'Overloaded' } },
    );
    const { events, sleep, err } = await run(1);
    expect(server.requests.length - before).toBe(2);
    expect(events.map((e) => e.type)).toEqual(['retry']);
    expect(sleep).toHaveBeenCalledTimes(1);
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).status).toBe(529);
  });

  it('tombstones what a broken stream delivered, then retries to a complete message', async () => {
    server.enqueue({ content: [{ type: 'text', text: 'x'.repeat(60) }], breakAfterEvents: 4, delayMs: 5 }, { content: [{ type: 'text', text: 'whole' }] });
    const { events, err } = await run(3);
    expect(err).toBeUndefined();
    expect(events.map((e) => e.type)).toEqual(['text_delta', 'text_delta', 'tombstone', 'retry', 'text_delta', 'message']);
    expect(events[2]).toMatchObject({ type: 'tombstone', content: [{ type: 'text', text: 'x'.repeat(48) }] });
  });
});
