import { Hono } from 'hono';
import { streamHandle } from 'hono/aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { invocationDeadline } from '../../../functions/api/invocation-deadline.ts';
import { createApiHandler, type StreamingHandler } from '../../../functions/handlers/create-api-handler.ts';
import { startLocalStack, type LocalStack } from '../../../local/stack.ts';
import { NO_EGRESS, NO_GIT_EGRESS } from '../../../sandbox-runner/common/egress-mode.ts';
import { makeTempDir } from '../../support/temp-dir.ts';
import { functionUrlEvent, installAwsLambdaGlobals, lambdaContext, ResponseCapture } from './lambda-runtime.ts';

describe('the API Lambda handler', () => {
  const tmp = makeTempDir();
  let stack: LocalStack;
  let handler: StreamingHandler;
  let loads = 0;

  beforeAll(async () => {
    installAwsLambdaGlobals();
    stack = await startLocalStack({ dataDir: tmp.dir, brain: () => ({ error: { status: 500, type: 'api_error', message: 'unscripted' } }) });
    handler = createApiHandler({
      loadDeps: async () => {
        loads += 1;
        return stack.deps;
      },
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
    const events = out.text
      .split('\n')
      .filter((l) => l.startsWith('event: '))
      .map((l) => l.slice('event: '.length));
    expect(events).toEqual(['turn_start', 'text_delta', 'assistant_message', 'turn_end']);
    // Written as separate chunks while the turn ran, not as one buffered body.
    expect(out.chunks.length).toBeGreaterThanOrEqual(4);
    expect(out.text).toContain('"text":"Hello from Lambda."');
  });

  it("ends a follower's stream shortly before the invocation deadline with a reconnect hint", async () => {
    const created = await invoke(functionUrlEvent('POST', '/v1/sessions', { headers: auth(), body: {} }));
    const sessionId = (JSON.parse(created.text) as { id: string }).id;
    stack.model!.enqueue(
      { content: [{ type: 'tool_use', id: 'toolu_slow', name: 'Bash', input: { command: 'sleep 4' } }] },
      { content: [{ type: 'text', text: 'Slept.' }] },
    );
    const running = fetch(`${stack.apiUrl}/v1/sessions/${sessionId}/turns`, { method: 'POST', headers: auth(), body: JSON.stringify({ prompt: 'sleep' }) });
    let turnId: string | null = null;
    while (!turnId) {
      const status = await invoke(functionUrlEvent('GET', `/v1/sessions/${sessionId}`, { headers: auth() }));
      turnId = (JSON.parse(status.text) as { currentTurnId: string | null }).currentTurnId;
    }
    // 6.5 s left: the follower stops 5 s before, long before the 4 s command ends.
    const out = await invoke(
      functionUrlEvent('GET', `/v1/sessions/${sessionId}/turns/${turnId}/events`, { headers: { ...auth(), accept: 'text/event-stream' } }),
      6_500,
    );
    const messages = out.text.split('\n\n').filter((m) => m.includes('event: '));
    const last = messages.at(-1)!;
    expect(last).toContain('event: turn_continued');
    expect(last).not.toMatch(/^id: /m);
    expect(last).toContain(`"eventsUrl":"/v1/sessions/${sessionId}/turns/${turnId}/events"`);
    expect(messages.some((m) => m.includes('event: turn_end'))).toBe(false);
    expect(((await (await running).json()) as { stopReason: string }).stopReason).toBe('end_turn');
  });

  it('answers 401 without a bearer token', async () => {
    const out = await invoke(functionUrlEvent('GET', '/v1/sessions'));
    expect(out.metadata?.statusCode).toBe(401);
    expect(JSON.parse(out.text)).toEqual({
      error: { code: 'unauthorized', message: 'Missing or invalid bearer token. Send "Authorization: Bearer <token>".' },
    });
  });

  it("caps a Function URL event's body by its route's limit, before the Idempotency-Key middleware reads it", async () => {
    const sessionId = (JSON.parse((await invoke(functionUrlEvent('POST', '/v1/sessions', { headers: auth(), body: {} }))).text) as { id: string }).id;
    const out = await invoke(
      functionUrlEvent('POST', `/v1/sessions/${sessionId}/turns`, {
        headers: { ...auth(), 'idempotency-key': 'big-event' },
        body: { prompt: 'x'.repeat(3 * 1024 * 1024) },
      }),
    );
    expect(out.metadata?.statusCode).toBe(413);
    expect(JSON.parse(out.text)).toEqual({ error: { code: 'request_too_large', message: expect.stringMatching(/at most 2097152 are accepted here\.$/) } });
  });

  it('hands asynchronous events to the engine: a stale continuation is ignored, a malformed one rejected', async () => {
    const sessionId = (JSON.parse((await invoke(functionUrlEvent('POST', '/v1/sessions', { headers: auth(), body: {} }))).text) as { id: string }).id;
    const before = stack.model!.requests.length;
    const out = await invoke({
      kind: 'continue_turn',
      sessionId,
      turnId: 'turn_gone',
      handoffOwner: 'continuation/turn_gone/1',
      nextEventSeq: 3,
      modelCalls: 1,
      startedAt: 0,
    });
    expect(out.chunks).toEqual([]);
    expect(stack.model!.requests.length).toBe(before);
    await expect(invoke({ kind: 'continue_turn', sessionId: 'sess_1' })).rejects.toThrow(/Unknown asynchronous event for the API function/);
    await expect(invoke({ kind: 'mystery' })).rejects.toThrow(/Unknown asynchronous event/);
  });

  it('refuses allow-listed sessions and git imports up front where the deployment has no egress (STRATUS_EGRESS=none)', async () => {
    const noEgress = createApiHandler({ loadDeps: async () => ({ ...stack.deps, config: { ...stack.deps.config, egress: 'none' } }) });
    const call = async (event: unknown) => {
      const out = new ResponseCapture();
      await noEgress(event, out as never, lambdaContext(600_000));
      await out.finished;
      return { status: out.metadata?.statusCode, body: JSON.parse(out.text) as unknown };
    };
    const refusal = { error: { code: 'egress_unavailable', message: NO_EGRESS } };
    const before = (await stack.deps.sessions.listForTenant('local', { limit: 200 })).sessions.length;
    expect(await call(functionUrlEvent('POST', '/v1/sessions', { headers: auth(), body: { settings: { allowedDomains: ['registry.npmjs.org'] } } }))).toEqual({
      status: 400,
      body: refusal,
    });
    expect((await stack.deps.sessions.listForTenant('local', { limit: 200 })).sessions.length).toBe(before);
    const plain = await call(functionUrlEvent('POST', '/v1/sessions', { headers: auth(), body: {} }));
    expect(plain.status).toBe(201);
    expect((await stack.deps.sessions.listForTenant('local', { limit: 200 })).sessions.length).toBe(before + 1);
    const id = (plain.body as { id: string }).id;
    expect(
      await call(
        functionUrlEvent('POST', `/v1/sessions/${id}/workspace/git`, { headers: auth(), body: { url: 'https://github.com/octocat/Hello-World.git' } }),
      ),
    ).toEqual({
      status: 400,
      body: refusal,
    });
  });

  it('in the mailbox mode (the AWS default) accepts allow-listed sessions and refuses only git imports up front', async () => {
    const mailbox = createApiHandler({ loadDeps: async () => ({ ...stack.deps, config: { ...stack.deps.config, egress: 'mailbox' } }) });
    const call = async (event: unknown) => {
      const out = new ResponseCapture();
      await mailbox(event, out as never, lambdaContext(600_000));
      await out.finished;
      return { status: out.metadata?.statusCode, body: JSON.parse(out.text) as { id?: string } };
    };
    const listed = await call(functionUrlEvent('POST', '/v1/sessions', { headers: auth(), body: { settings: { allowedDomains: ['registry.npmjs.org'] } } }));
    expect(listed.status).toBe(201);
    const git = await call(
      functionUrlEvent('POST', `/v1/sessions/${listed.body.id}/workspace/git`, {
        headers: auth(),
        body: { url: 'https://github.com/octocat/Hello-World.git' },
      }),
    );
    expect(git).toEqual({ status: 400, body: { error: { code: 'egress_unavailable', message: NO_GIT_EGRESS } } });
  });

  it('behind CloudFront, takes the bearer token from the header the distribution moved it to', async () => {
    // Origin access control puts its own SigV4 signature in Authorization.
    const signed = {
      authorization: 'AWS4-HMAC-SHA256 Credential=AKIA/20261130/eu-west-1/lambda/aws4_request, Signature=00',
      'x-stratus-authorization': `Bearer ${stack.token}`,
    };
    const ok = await invoke(functionUrlEvent('GET', '/v1/sessions', { headers: signed }));
    expect(ok.metadata?.statusCode).toBe(200);
    const forged = await invoke(functionUrlEvent('GET', '/v1/sessions', { headers: { ...signed, 'x-stratus-authorization': 'Bearer not-a-token' } }));
    expect(forged.metadata?.statusCode).toBe(401);
  });

  it('through the webhook alias, serves the GitHub webhook route and nothing else', async () => {
    const withWebhooks = createApiHandler({
      loadDeps: async () => ({ ...stack.deps, config: { ...stack.deps.config, github: { ...stack.deps.config.github, webhookSecret: 'whsec' } } }),
    });
    const viaAlias = async (event: unknown) => {
      const out = new ResponseCapture();
      await withWebhooks(event, out as never, lambdaContext(600_000, 'arn:aws:lambda:eu-west-1:123456789012:function:stratus-test-api:webhook'));
      await out.finished;
      return { status: out.metadata?.statusCode, text: out.text };
    };
    // The whole API answers 404 there, even with a valid token.
    const api = await viaAlias(functionUrlEvent('GET', '/v1/sessions', { headers: auth() }));
    expect(api.status).toBe(404);
    expect(await viaAlias(functionUrlEvent('GET', '/docs'))).toMatchObject({ status: 404 });
    // The webhook route is there: an unsigned delivery is refused by the route itself, not unrouted.
    const webhook = await viaAlias(
      functionUrlEvent('POST', '/v1/github/webhook', { headers: { 'content-type': 'application/json', 'x-github-event': 'ping' }, body: {} }),
    );
    expect(webhook.status).toBe(401);
    expect(webhook.text).toContain('X-Hub-Signature-256');
  });

  it('builds deps once per container', () => {
    expect(loads).toBe(1);
  });
});

describe('invocationDeadline', () => {
  const app = new Hono();
  app.get('/deadline', (c) =>
    c.json({
      remainingMs: (() => {
        const d = invocationDeadline(c);
        return d === undefined ? null : Math.round((d - Date.now()) / 1000) * 1000;
      })(),
    }),
  );

  it('gives the app the Lambda deadline through hono/aws-lambda', async () => {
    installAwsLambdaGlobals();
    const out = new ResponseCapture();
    await (streamHandle(app) as unknown as StreamingHandler)(functionUrlEvent('GET', '/deadline'), out as never, lambdaContext(12_000));
    await out.finished;
    expect(JSON.parse(out.text)).toEqual({ remainingMs: 12_000 });
  });

  it('has no deadline off Lambda', async () => {
    const res = await app.request('/deadline');
    expect(await res.json()).toEqual({ remainingMs: null });
  });
});
