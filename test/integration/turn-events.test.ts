import { beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../local/stack.ts';
import { type apiClient, parseSse, readLive } from '../support/api-client.ts';
import { useLocalStack } from '../support/stack-fixture.ts';

/** Reads an SSE response until `stopAfter` events have arrived, then drops the connection. */
async function readSome(res: Response, stopAfter: number): Promise<{ ids: number[]; types: string[] }> {
  const events = await readLive(res, (seen) => seen.length >= stopAfter, { cancel: true });
  return { ids: events.map((e) => e.id), types: events.map((e) => e.event.type) };
}

describe('turn events are durable: a client can drop and resume', () => {
  const fx = useLocalStack({});
  let stack: LocalStack;
  let api: ReturnType<typeof apiClient>;
  beforeAll(() => {
    ({ stack } = fx);
    ({ api } = fx);
  });

  it('resumes after Last-Event-ID and sees every later event exactly once, through turn_end', async () => {
    const sessionId = await api.createSession({ 'f.txt': 'x\n' });
    stack.model!.enqueue(
      {
        content: [
          { type: 'text', text: 'Step one.' },
          { type: 'tool_use', name: 'Bash', input: { command: 'cat f.txt' } },
        ],
        delayMs: 20,
      },
      { content: [{ type: 'text', text: 'Finished after a slow stream of words.' }], delayMs: 40 },
    );
    const res = await fetch(`${stack.apiUrl}/v1/sessions/${sessionId}/turns`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.token}`, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ prompt: 'go' }),
    });
    const first = await readSome(res, 2);
    expect(first.types[0]).toBe('turn_start');
    const turnId = (await api.request('GET', `/v1/sessions/${sessionId}`)).json.currentTurnId as string;
    expect(turnId).toMatch(/^turn_/);

    const resumed = await fetch(`${stack.apiUrl}/v1/sessions/${sessionId}/turns/${turnId}/events`, {
      headers: { authorization: `Bearer ${stack.token}`, accept: 'text/event-stream', 'last-event-id': String(first.ids.at(-1)) },
    });
    const rest = parseSse(await resumed.text());
    expect(rest.at(-1)).toMatchObject({ type: 'turn_end', stopReason: 'end_turn' });

    // The whole turn, as a JSON page: ids are contiguous, and the resumed stream is exactly its tail.
    const page = await api.request('GET', `/v1/sessions/${sessionId}/turns/${turnId}/events`);
    expect(page.json.done).toBe(true);
    const seqs = page.json.events.map((e: { id: number }) => e.id);
    expect(seqs).toEqual(seqs.map((_: number, i: number) => i));
    expect(page.json.events.slice(first.ids.at(-1)! + 1).map((e: { event: { type: string } }) => e.event.type)).toEqual(rest.map((e) => e.type));
    const text = page.json.events.map((e: { event: { type: string; text?: string } }) => (e.event.type === 'text_delta' ? e.event.text : '')).join('');
    expect(text).toBe('Step one.Finished after a slow stream of words.');
  });

  it('stores every event before a live client sees it', async () => {
    const sessionId = await api.createSession();
    // One response with many calls: the turn emits a burst of events at once, the hardest case
    // for a feed that sends before its (ordered, one at a time) store writes land.
    const calls = Array.from({ length: 12 }, (_, i) => ({ type: 'tool_use' as const, id: `toolu_burst_${i}`, name: 'NoSuchTool', input: { i } }));
    stack.model!.enqueue({ content: [{ type: 'text', text: 'Many calls at once.' }, ...calls] }, { content: [{ type: 'text', text: 'Done.' }] });
    const res = await fetch(`${stack.apiUrl}/v1/sessions/${sessionId}/turns`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.token}`, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ prompt: 'go' }),
    });
    let checks = 0;
    let seen = 0;
    const live = await readLive(res, async (events) => {
      if (events.length === seen) return false;
      seen = events.length;
      // The moment the newest event arrives, the log already holds it.
      const newest = events.at(-1)!;
      const turnId = events[0]!.event.turnId as string;
      const stored = await api.request('GET', `/v1/sessions/${sessionId}/turns/${turnId}/events?after=${newest.id - 1}&limit=1`);
      expect(stored.json.events).toEqual([newest]);
      checks += 1;
      return false;
    });
    expect(live.filter((e) => e.event.type === 'tool_use')).toHaveLength(12);
    expect(live.at(-1)!.event).toMatchObject({ type: 'turn_end', stopReason: 'end_turn' });
    expect(checks).toBeGreaterThan(1);
    // And everything sent live is exactly the stored log.
    const page = await api.request('GET', `/v1/sessions/${sessionId}/turns/${live[0]!.event.turnId}/events`);
    expect(page.json.events).toEqual(live);
  });

  it('404s an unknown session and 400s a bad cursor', async () => {
    const sessionId = await api.createSession();
    const bad = await api.request('GET', `/v1/sessions/${sessionId}/turns/turn_x/events?after=abc`);
    expect(bad.status).toBe(400);
    const ghost = await api.request('GET', `/v1/sessions/ses_nope/turns/turn_x/events`);
    expect(ghost.status).toBe(404);
  });

  it("ends a stream resumed at or past a finished turn's turn_end at once, and pages past it as done", async () => {
    const sessionId = await api.createSession();
    stack.model!.enqueue({ content: [{ type: 'text', text: 'Done.' }] });
    const events = (await api.turnSse(sessionId, 'hi')).events;
    const turnId = (events[0] as { turnId: string }).turnId;
    const endId = events.length - 1;
    for (const lastEventId of [endId, endId + 5, 999_999_999_999_999]) {
      const res = await fetch(`${stack.apiUrl}/v1/sessions/${sessionId}/turns/${turnId}/events`, {
        headers: { authorization: `Bearer ${stack.token}`, accept: 'text/event-stream', 'last-event-id': String(lastEventId) },
        signal: AbortSignal.timeout(5_000),
      });
      expect(res.status).toBe(200);
      expect(parseSse(await res.text())).toEqual([]);
      const page = await api.request('GET', `/v1/sessions/${sessionId}/turns/${turnId}/events?cursor=${lastEventId}`);
      expect(page.json).toEqual({ events: [], nextCursor: null, next: lastEventId, done: true });
    }
    // One before the end still gets the turn_end.
    const last = await fetch(`${stack.apiUrl}/v1/sessions/${sessionId}/turns/${turnId}/events`, {
      headers: { authorization: `Bearer ${stack.token}`, accept: 'text/event-stream', 'last-event-id': String(endId - 1) },
      signal: AbortSignal.timeout(5_000),
    });
    expect(parseSse(await last.text()).map((e) => e.type)).toEqual(['turn_end']);
  });

  it('answers 400 to an event id or cursor that is not a small whole number, as SSE and as JSON', async () => {
    const sessionId = await api.createSession();
    stack.model!.enqueue({ content: [{ type: 'text', text: 'Done.' }] });
    const turnId = ((await api.turnSse(sessionId, 'hi')).events[0] as { turnId: string }).turnId;
    const path = `/v1/sessions/${sessionId}/turns/${turnId}/events`;
    for (const bad of ['9'.repeat(200), '1e3', '-2', '-1', 'abc', '1.5', '']) {
      for (const accept of ['text/event-stream', 'application/json']) {
        const res = await fetch(`${stack.apiUrl}${path}`, {
          headers: { authorization: `Bearer ${stack.token}`, accept, 'last-event-id': bad },
          signal: AbortSignal.timeout(5_000),
        });
        expect([bad, accept, res.status]).toEqual([bad, accept, 400]);
        expect(((await res.json()) as { error: { message: string } }).error.message).toBe(
          'Invalid header: "last-event-id": must be the `id` of an event of this turn',
        );
      }
      if (bad === '-1') continue;
      for (const name of ['cursor', 'after']) {
        const page = await api.request('GET', `${path}?${name}=${encodeURIComponent(bad)}`);
        expect([name, bad, page.status]).toEqual([name, bad, 400]);
        expect(page.json.error.message).toMatch(new RegExp(`^Invalid query: "${name}": must be`));
      }
    }
  });
});
