import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_FUNCTION, type LocalStack } from '../../local/stack.ts';
import { apiClient } from '../support/api-client.ts';
import { useLocalStack } from '../support/stack-fixture.ts';
import { until } from '../support/until.ts';

interface Listed {
  id: string;
  functionName: string;
  event?: unknown;
  error: { type: string; message: string };
}

/** A failed asynchronous invocation is kept (the local async-failures queue), listed and sent again through the admin API. */
describe('failed asynchronous work and its redrive on the local stack', () => {
  const fx = useLocalStack({ apiTokens: { 'tenant-token': 'local', 'admin-secret': '@admin' } });
  let stack: LocalStack;
  let lambda: LambdaClient;
  const admin = () => apiClient(fx.stack.apiUrl, 'admin-secret');
  beforeAll(() => {
    stack = fx.stack;
    lambda = new LambdaClient({ region: 'us-east-1', endpoint: stack.urls.lambda, credentials: stack.deps.config.localCredentials! });
  });
  afterAll(() => lambda?.destroy());

  const sendEvent = (payload: unknown) =>
    lambda.send(new InvokeCommand({ FunctionName: API_FUNCTION, InvocationType: 'Event', Payload: Buffer.from(JSON.stringify(payload)) }));
  /** Every failure listed, page by page. */
  const listAll = async (limit = 100): Promise<{ failures: Listed[]; pages: number }> => {
    const failures: Listed[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await admin().request('GET', `/v1/admin/async-failures?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status).toBe(200);
      failures.push(...res.json.failures);
      cursor = res.json.nextCursor;
      pages++;
    } while (cursor);
    return { failures, pages };
  };
  const failuresOf = async (event: unknown) => (await listAll()).failures.filter((f) => JSON.stringify(f.event) === JSON.stringify(event));

  it('lists an async invocation that threw, with its event and error, and completes the work when it is redriven', async () => {
    const sessionId = await fx.api.createSession({ 'a.txt': 'a\n' });
    const event = { kind: 'purge_session', sessionId };
    // The purge refuses a session that is not deleted: the invocation throws.
    expect((await sendEvent(event)).StatusCode).toBe(202);
    const [failure] = await until(
      () => failuresOf(event),
      (found) => found.length > 0,
    );
    expect(failure).toMatchObject({ functionName: API_FUNCTION, event, error: { message: expect.stringContaining('it is not deleted') } });
    expect(stack.asyncFailures().find((r) => r.requestContext.requestId === failure!.id)?.requestContext.functionArn).toMatch(/:function:stratus-api$/);
    // A tenant's token cannot see or redrive it.
    expect((await fx.api.request('GET', '/v1/admin/async-failures')).status).toBe(403);
    expect((await apiClient(stack.apiUrl, 'tenant-token').request('POST', `/v1/admin/async-failures/${failure!.id}/redrive`)).status).toBe(403);
    expect(await stack.deps.sessions.get(sessionId)).toBeDefined();

    // Once the session is deleted, the redrive sends the same event again: the purge completes and the record is gone.
    await stack.deps.sessions.markDeleted(sessionId, Date.now());
    const redriven = await admin().request('POST', `/v1/admin/async-failures/${failure!.id}/redrive`);
    expect(redriven.status).toBe(202);
    expect(redriven.json).toEqual({ id: failure!.id, functionName: API_FUNCTION });
    await until(
      () => stack.deps.sessions.get(sessionId),
      (s) => s === undefined,
    );
    expect(await stack.deps.messages.loadFrom(sessionId)).toEqual([]);
    expect(await failuresOf(event)).toEqual([]);
    // Redriving it again: it is no longer there.
    expect((await admin().request('POST', `/v1/admin/async-failures/${failure!.id}/redrive`)).status).toBe(404);
  });

  it('pages through every failure once, and redrives them all: each that fails again is listed anew, under a new id', async () => {
    const events = Array.from({ length: 12 }, (_, i) => ({ kind: 'not_a_kind', n: i }));
    for (const e of events) await sendEvent(e);
    const mine = (f: Listed) => (f.event as { kind?: string })?.kind === 'not_a_kind';
    await until(
      async () => (await listAll()).failures.filter(mine),
      (found) => found.length === 12,
    );
    const paged = await listAll(5);
    const ids = paged.failures.filter(mine).map((f) => f.id);
    expect(new Set(ids).size).toBe(12);
    expect(paged.pages).toBeGreaterThanOrEqual(3);
    expect(paged.failures.filter(mine)[0]!.error.message).toContain('Unknown asynchronous event');
    expect((await admin().request('GET', '/v1/admin/async-failures?cursor=not-a-cursor!')).status).toBe(400);

    const all = await admin().request('POST', '/v1/admin/async-failures/redrive');
    expect(all.status).toBe(200);
    expect(all.json.more).toBe(false);
    expect(all.json.redriven.map((r: { id: string }) => r.id)).toEqual(expect.arrayContaining(ids));
    // Each fails again: twelve new records of the same events, none of the old ids.
    const again = await until(
      async () => (await listAll()).failures.filter(mine),
      (found) => found.length === 12,
    );
    expect(again.map((f) => f.event)).toEqual(expect.arrayContaining(events));
    expect(again.some((f) => ids.includes(f.id))).toBe(false);
  });
});
