import { describe, expect, it } from 'vitest';
import { parseSse } from '../support/api-client.ts';
import { bash, text, unscripted, useLocalStack } from '../support/stack-fixture.ts';

describe('the API at its edges: sizes, media types, methods, unknown turns, heartbeats, CORS', () => {
  const fx = useLocalStack({ brain: unscripted, api: { sseHeartbeatMs: 100, corsOrigins: ['https://app.example'] } });
  const auth = () => ({ authorization: `Bearer ${fx.stack.token}` });

  it("answers a body past its route's limit with a 413 naming the limit, before reading it all", async () => {
    const sessionId = await fx.api.createSession();
    const big = new Uint8Array(60 * 1024 * 1024).fill(0x20);
    for (const [path, limit] of [
      ['/v1/sessions', 16 * 1024 * 1024],
      [`/v1/sessions/${sessionId}/turns`, 2 * 1024 * 1024],
    ] as const) {
      const res = await fetch(`${fx.stack.apiUrl}${path}`, { method: 'POST', headers: { ...auth(), 'content-type': 'application/json' }, body: big });
      expect(res.status).toBe(413);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('request_too_large');
      expect(body.error.message).toContain(`at most ${limit}`);
    }
    const transcript = await fetch(`${fx.stack.apiUrl}/v1/sessions/import`, { method: 'POST', headers: auth(), body: big });
    expect(transcript.status).toBe(413);
    expect(((await transcript.json()) as { error: { message: string } }).error.message).toContain(String(16 * 1024 * 1024));
  });

  it('answers a wrong method with 405 and Allow, an unknown path with 404', async () => {
    const sessionId = await fx.api.createSession();
    const res = await fetch(`${fx.stack.apiUrl}/v1/sessions/${sessionId}/messages`, { method: 'PATCH', headers: auth() });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD');
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('method_not_allowed');
    const listing = await fetch(`${fx.stack.apiUrl}/v1/schedules`, { method: 'PUT', headers: auth() });
    expect(listing.status).toBe(405);
    expect(listing.headers.get('allow')?.split(', ').sort()).toEqual(['GET', 'HEAD', 'POST']);
    const file = await fetch(`${fx.stack.apiUrl}/v1/sessions/${sessionId}/workspace/files/a/b.txt`, { method: 'DELETE', headers: auth() });
    expect(file.status).toBe(405);
    expect((await fetch(`${fx.stack.apiUrl}/v1/nothing-here`, { headers: auth() })).status).toBe(404);
  });

  it('answers 404 for the events of a turn that does not exist, as JSON and as SSE', async () => {
    const sessionId = await fx.api.createSession();
    const madeUp = 'turn_0mx3ez05k1d88e6527cf7897b';
    const json = await fx.api.request('GET', `/v1/sessions/${sessionId}/turns/${madeUp}/events`);
    expect(json.status).toBe(404);
    const sse = await fetch(`${fx.stack.apiUrl}/v1/sessions/${sessionId}/turns/${madeUp}/events`, {
      headers: { ...auth(), accept: 'text/event-stream' },
      signal: AbortSignal.timeout(10_000),
    });
    expect(sse.status).toBe(404);
  });

  it('sends heartbeat comments while a tool runs, and pages events with cursor/nextCursor', async () => {
    const sessionId = await fx.api.createSession();
    fx.stack.model!.enqueue({ content: [bash('toolu_sleep', 'sleep 1; echo woke')] }, text('Done.'));
    const res = await fetch(`${fx.stack.apiUrl}/v1/sessions/${sessionId}/turns`, {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ prompt: 'sleep' }),
    });
    const raw = await res.text();
    expect(raw).toMatch(/^: heartbeat$/m);
    const events = parseSse(raw);
    expect(events.at(-1)).toMatchObject({ type: 'turn_end', stopReason: 'end_turn' });
    const turnId = (events[0] as { turnId: string }).turnId;

    const seen: string[] = [];
    let cursor: string | null = '-1';
    let pages = 0;
    while (cursor !== null) {
      const page = await fx.api.request('GET', `/v1/sessions/${sessionId}/turns/${turnId}/events?limit=2&cursor=${cursor}`);
      expect(page.status).toBe(200);
      seen.push(...page.json.events.map((e: { event: { type: string } }) => e.event.type));
      cursor = page.json.nextCursor;
      pages++;
    }
    expect(seen).toEqual(events.map((e) => e.type));
    expect(pages).toBe(Math.ceil(events.length / 2));
    // The old name still works for one release.
    const old = await fx.api.request('GET', `/v1/sessions/${sessionId}/turns/${turnId}/events?after=0`);
    expect(old.json.events[0].id).toBe(1);
    const bad = await fx.api.request('GET', `/v1/sessions/${sessionId}/turns/${turnId}/events?cursor=zzz`);
    expect(bad.status).toBe(400);
  });

  it('answers CORS preflights from an allowed origin before auth, and not for others', async () => {
    const preflight = (origin: string) =>
      fetch(`${fx.stack.apiUrl}/v1/sessions`, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
      });
    const allowed = await preflight('https://app.example');
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://app.example');
    expect(allowed.headers.get('access-control-allow-headers')).toContain('authorization');
    const other = await preflight('https://evil.example');
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    const get = await fetch(`${fx.stack.apiUrl}/v1/sessions`, { headers: { ...auth(), origin: 'https://app.example' } });
    expect(get.status).toBe(200);
    expect(get.headers.get('access-control-allow-origin')).toBe('https://app.example');
  });
});
