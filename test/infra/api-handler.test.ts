import { LambdaClient } from '@aws-sdk/client-lambda';
import { Hono } from 'hono';
import { streamHandle } from 'hono/aws-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Deps } from '../../functions/deps/deps.ts';
import { continueTurnNotImplemented, type ContinueTurn } from '../../functions/handlers/continue-turn.ts';
import { createApiHandler, type StreamingHandler } from '../../functions/handlers/create-api-handler.ts';
import { invocationClockFromEnv } from '../../functions/handlers/lambda-deadline.ts';
import { requestContinuation } from '../../functions/handlers/request-continuation.ts';
import { startLambdaInvokeServer } from '../../local/lambda-invoke-server.ts';
import { startLocalStack, type LocalStack } from '../../local/stack.ts';
import { makeTempDir } from '../support/temp-dir.ts';
import { functionUrlEvent, installAwsLambdaGlobals, lambdaContext, ResponseCapture } from './lambda-runtime.ts';

describe('the API Lambda handler', () => {
  const tmp = makeTempDir();
  let stack: LocalStack;
  let handler: StreamingHandler;
  let loads = 0;
  const continueTurn = vi.fn<ContinueTurn>(async () => undefined);

  beforeAll(async () => {
    installAwsLambdaGlobals();
    stack = await startLocalStack({ dataDir: tmp.dir, brain: () => ({ error: { status: 500, type: 'api_error', message: 'unscripted' } }) });
    handler = createApiHandler({
      loadDeps: async () => {
        loads += 1;
        return stack.deps;
      },
      continueTurn,
    });
  });
  afterAll(async () => {
    await stack.stop();
    tmp.cleanup();
  });

  const invoke = async (event: unknown, remainingMs = 600_000) => {
    const out = new ResponseCapture();
    await handler(event, out as never, lambdaContext(remainingMs));
    await out.finished;
    return out;
  };
  const auth = () => ({ authorization: `Bearer ${stack.token}`, 'content-type': 'application/json' });

  it('streams a turn as SSE from a Function URL event, through the same app as the local stack', async () => {
    const created = await invoke(functionUrlEvent('POST', '/v1/sessions', { headers: auth(), body: {} }));
    expect(created.metadata?.statusCode).toBe(201);
    const sessionId = (JSON.parse(created.text) as { id: string }).id;

    stack.model!.enqueue({ content: [{ type: 'text', text: 'Hello from Lambda.' }] });
    const out = await invoke(
      functionUrlEvent('POST', `/v1/sessions/${sessionId}/turns`, { headers: { ...auth(), accept: 'text/event-stream' }, body: { prompt: 'hi' } }),
    );
    expect(out.metadata?.statusCode).toBe(200);
    expect(out.metadata?.headers?.['content-type']).toBe('text/event-stream');
    const events = out.text.split('\n').filter((l) => l.startsWith('event: ')).map((l) => l.slice('event: '.length));
    expect(events).toEqual(['turn_start', 'text_delta', 'assistant_message', 'turn_end']);
    // Written as separate chunks while the turn ran, not as one buffered body.
    expect(out.chunks.length).toBeGreaterThanOrEqual(4);
    expect(out.text).toContain('"text":"Hello from Lambda."');
  });

  it('answers 401 without a bearer token', async () => {
    const out = await invoke(functionUrlEvent('GET', '/v1/sessions'));
    expect(out.metadata?.statusCode).toBe(401);
    expect(JSON.parse(out.text)).toEqual({
      error: { code: 'unauthorized', message: 'Missing or invalid bearer token. Send "Authorization: Bearer <token>".' },
    });
  });

  it('routes a continue_turn self-invocation to continueTurn with the invocation deadline', async () => {
    continueTurn.mockClear();
    const out = await invoke({ kind: 'continue_turn', sessionId: 'sess_1', turnId: 'turn_1' }, 42_000);
    expect(out.chunks).toEqual([]);
    expect(continueTurn).toHaveBeenCalledTimes(1);
    const [deps, event, invocation] = continueTurn.mock.calls[0]!;
    expect(event).toEqual({ kind: 'continue_turn', sessionId: 'sess_1', turnId: 'turn_1' });
    expect(invocation.remainingTimeMs()).toBe(42_000);
    expect((deps as Deps).sessions).toBe(stack.deps.sessions);
  });

  it('receives a continuation requested through the Lambda Invoke API as an asynchronous event', async () => {
    continueTurn.mockClear();
    const server = await startLambdaInvokeServer({
      functions: { 'stratus-test-api': async (event) => { await handler(event, new ResponseCapture() as never, lambdaContext(900_000)); } },
    });
    try {
      const lambda = new LambdaClient({ region: 'eu-west-1', endpoint: server.url, credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'x' } });
      await requestContinuation(lambda, 'stratus-test-api', { kind: 'continue_turn', sessionId: 'sess_2', turnId: 'turn_2' });
      await server.pending();
    } finally {
      await server.close();
    }
    expect(continueTurn).toHaveBeenCalledTimes(1);
    expect(continueTurn.mock.calls[0]![1]).toEqual({ kind: 'continue_turn', sessionId: 'sess_2', turnId: 'turn_2' });
    expect(continueTurn.mock.calls[0]![2].remainingTimeMs()).toBe(900_000);
  });

  it('rejects a malformed continue_turn event instead of treating it as HTTP', async () => {
    await expect(invoke({ kind: 'continue_turn', sessionId: 'sess_1' })).rejects.toThrow(/turnId/);
  });

  it('builds deps once per container', () => {
    expect(loads).toBe(1);
  });

  it('fails a continuation loudly while the turn engine has no continuation entry point', async () => {
    const stub = createApiHandler({ loadDeps: async () => stack.deps, continueTurn: continueTurnNotImplemented });
    await expect(stub({ kind: 'continue_turn', sessionId: 's', turnId: 't' }, new ResponseCapture() as never, lambdaContext(1_000))).rejects.toThrow(
      'continueTurn is not implemented: the turn engine has no continuation entry point yet.',
    );
  });
});

describe('invocationClockFromEnv', () => {
  const app = new Hono();
  app.get('/deadline', (c) => c.json({ remainingMs: invocationClockFromEnv(c.env)?.remainingTimeMs() ?? null }));

  it('gives the app the Lambda deadline through hono/aws-lambda', async () => {
    installAwsLambdaGlobals();
    const out = new ResponseCapture();
    await (streamHandle(app) as unknown as StreamingHandler)(functionUrlEvent('GET', '/deadline'), out as never, lambdaContext(12_345));
    await out.finished;
    expect(JSON.parse(out.text)).toEqual({ remainingMs: 12_345 });
  });

  it('has no deadline off Lambda', async () => {
    const res = await app.request('/deadline');
    expect(await res.json()).toEqual({ remainingMs: null });
  });
});
