import { beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../local/stack.ts';
import { parseSse, type apiClient } from '../support/api-client.ts';
import { useLocalStack } from '../support/stack-fixture.ts';

/** `Idempotency-Key` on creating POSTs, against the local stack's DynamoDB. */
describe('idempotent POSTs', () => {
  const fx = useLocalStack({});
  let stack: LocalStack;
  let api: ReturnType<typeof apiClient>;
  beforeAll(() => {
    ({ stack, api } = fx);
  });
  const key = (name: string) => ({ 'idempotency-key': `${name}-${Math.random().toString(36).slice(2)}` });

  it('replays the first response to a retry with the same key and body, and refuses another body with 422', async () => {
    const k = key('create');
    const first = await api.request('POST', '/v1/sessions', { title: 'once' }, k);
    expect(first.status).toBe(201);
    const again = await api.request('POST', '/v1/sessions', { title: 'once' }, k);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.json).toEqual(first.json);
    const other = await api.request('POST', '/v1/sessions', { title: 'twice' }, k);
    expect(other.status).toBe(422);
    expect(other.json.error.code).toBe('idempotency_key_reused');
    const listed = (await api.request('GET', '/v1/sessions?limit=200')).json.sessions.filter((s: { title: string }) => s.title === 'once');
    expect(listed).toHaveLength(1);
  });

  it('never starts a second turn for a retried POST …/turns (JSON, SSE, and concurrent duplicates)', async () => {
    const sessionId = await api.createSession();
    const before = stack.model!.requests.length;
    stack.model!.enqueue({ content: [{ type: 'text', text: 'only once' }] });
    const k = key('turn');
    const first = await api.request('POST', `/v1/sessions/${sessionId}/turns`, { prompt: 'hello' }, k);
    expect(first.status).toBe(200);
    const retry = await api.request('POST', `/v1/sessions/${sessionId}/turns`, { prompt: 'hello' }, k);
    expect(retry.json.turnId).toBe(first.json.turnId);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(stack.model!.requests.length).toBe(before + 1);

    // A streamed turn: the retry follows the same turn's events.
    stack.model!.enqueue({ content: [{ type: 'text', text: 'streamed once' }] });
    const sk = key('sse');
    const sse = (extra: Record<string, string>) =>
      fetch(`${stack.apiUrl}/v1/sessions/${sessionId}/turns`, {
        method: 'POST',
        body: JSON.stringify({ prompt: 'stream it' }),
        headers: { authorization: `Bearer ${stack.token}`, 'content-type': 'application/json', accept: 'text/event-stream', ...extra },
      });
    const streamed = parseSse(await (await sse(sk)).text());
    const replayed = await sse(sk);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    const replayedEvents = parseSse(await replayed.text());
    expect(replayedEvents.filter((e) => e.type !== 'text_delta')).toEqual(streamed.filter((e) => e.type !== 'text_delta'));
    expect(stack.model!.requests.length).toBe(before + 2);

    // Two identical requests at once: one runs the turn, the other waits for it and gets the same answer.
    stack.model!.enqueue({ content: [{ type: 'text', text: 'raced once' }], delayMs: 40 });
    const ck = key('race');
    const [a, b] = await Promise.all([
      api.request('POST', `/v1/sessions/${sessionId}/turns`, { prompt: 'race' }, ck),
      api.request('POST', `/v1/sessions/${sessionId}/turns`, { prompt: 'race' }, ck),
    ]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(a.json.turnId).toBe(b.json.turnId);
    expect([a.headers.get('idempotent-replayed'), b.headers.get('idempotent-replayed')].sort()).toEqual(['true', null].sort());
    expect(stack.model!.requests.length).toBe(before + 3);
    expect((await api.messages(sessionId)).filter((m) => m.kind === 'prompt')).toHaveLength(3);
  });

  it('does not keep an answer a retry could change: a 409 leaves the key free', async () => {
    const sessionId = await api.createSession();
    // Six stream events × 400 ms: the turn still runs when the second POST arrives.
    stack.model!.enqueue({ content: [{ type: 'text', text: 'slow' }], delayMs: 400 });
    const running = api.request('POST', `/v1/sessions/${sessionId}/turns`, { prompt: 'slow one' });
    // Wait until the first turn holds the session, however slow the machine.
    while ((await api.request('GET', `/v1/sessions/${sessionId}`)).json.status !== 'running') await new Promise((r) => setTimeout(r, 50));
    const k = key('busy');
    const busy = await api.request('POST', `/v1/sessions/${sessionId}/turns`, { prompt: 'second' }, k);
    expect(busy.status).toBe(409);
    await running;
    stack.model!.enqueue({ content: [{ type: 'text', text: 'now it runs' }] });
    const retried = await api.request('POST', `/v1/sessions/${sessionId}/turns`, { prompt: 'second' }, k);
    expect(retried.status).toBe(200);
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
  });

  it('covers schedules too, and refuses a malformed key', async () => {
    const k = key('schedule');
    const body = { name: 'nightly', cron: '0 3 * * *', prompt: 'check things' };
    const first = await api.request('POST', '/v1/schedules', body, k);
    expect(first.status).toBe(201);
    const again = await api.request('POST', '/v1/schedules', body, k);
    expect(again.json.id).toBe(first.json.id);
    const bad = await api.request('POST', '/v1/schedules', body, { 'idempotency-key': 'has space' });
    expect(bad.status).toBe(400);
  });
});
