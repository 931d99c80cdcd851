import { beforeAll, describe, expect, it } from 'vitest';
import { startLocalStack, type LocalStack } from '../../local/stack.ts';
import { apiClient } from '../support/api-client.ts';
import { makeTempDir } from '../support/temp-dir.ts';
import { useLocalStack } from '../support/stack-fixture.ts';

describe('API errors and auth', () => {
  const fx = useLocalStack({ apiTokens: { 'token-a': 'tenant-a', 'token-b': 'tenant-b' } });
  let stack: LocalStack;
  let api: ReturnType<typeof apiClient>;
  let other: ReturnType<typeof apiClient>;
  beforeAll(() => {
    ({ stack } = fx);
    api = apiClient(stack.apiUrl, 'token-a');
    other = apiClient(stack.apiUrl, 'token-b');
  });

  it('401 without a token or with a wrong one; health needs none', async () => {
    const none = await fetch(`${stack.apiUrl}/v1/sessions`);
    expect(none.status).toBe(401);
    expect(await none.json()).toEqual({ error: { code: 'unauthorized', message: 'Missing or invalid bearer token. Send "Authorization: Bearer <token>".' } });
    const wrong = await apiClient(stack.apiUrl, 'nope').request('GET', '/v1/sessions');
    expect(wrong.status).toBe(401);
    expect(wrong.json.error.message).toBe('Invalid or revoked bearer token.');
    expect((await fetch(`${stack.apiUrl}/healthz`)).status).toBe(200);
  });

  it('400 names the bad field', async () => {
    const sessionId = await api.createSession();
    const missing = await api.request('POST', `/v1/sessions/${sessionId}/turns`, {});
    expect(missing.status).toBe(400);
    expect(missing.json.error.message).toContain('"prompt"');
    const wrongType = await api.request('POST', `/v1/sessions/${sessionId}/turns`, { prompt: 42 });
    expect(wrongType.status).toBe(400);
    expect(wrongType.json.error.message).toMatch(/"prompt": .*string/);
    const extra = await api.request('POST', `/v1/sessions/${sessionId}/turns`, { prompt: 'x', model: 'y' });
    expect(extra.status).toBe(400);
    expect(extra.json.error.message).toContain('model');
    const res = await fetch(`${stack.apiUrl}/v1/sessions`, {
      method: 'POST',
      headers: { authorization: 'Bearer token-a', 'content-type': 'application/json' },
      body: '{not json',
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toBe('Request body must be valid JSON.');
    // A body that does not say it is JSON is not parsed as JSON.
    for (const headers of [{ 'content-type': 'text/plain' }, {}] as Record<string, string>[]) {
      const notJson = await fetch(`${stack.apiUrl}/v1/sessions`, {
        method: 'POST',
        headers: { authorization: 'Bearer token-a', ...headers },
        body: '{"title":"t"}',
      });
      expect(notJson.status).toBe(415);
      expect(((await notJson.json()) as { error: { code: string } }).error.code).toBe('unsupported_media_type');
    }
    const badFile = await api.request('POST', '/v1/sessions', { files: { '../escape.txt': 'x' } });
    expect(badFile.status).toBe(400);
    expect(badFile.json.error.message).toBe(
      'Invalid body: "files": Invalid file path "../escape.txt": it contains a ".." component; use a path inside the workspace.',
    );
    const badLimit = await api.request('GET', '/v1/sessions?limit=0');
    expect(badLimit.status).toBe(400);
    expect(badLimit.json.error.message).toContain('"limit"');
  });

  it("404 for unknown sessions and for other tenants' sessions", async () => {
    const unknown = await api.turn('ses_doesnotexist', 'hi');
    expect(unknown.status).toBe(404);
    expect(unknown.json.error).toEqual({ code: 'not_found', message: 'Session ses_doesnotexist not found.' });
    const mine = await api.createSession();
    expect((await other.request('GET', `/v1/sessions/${mine}`)).status).toBe(404);
    expect((await other.request('GET', `/v1/sessions/${mine}/messages`)).status).toBe(404);
    expect((await other.turn(mine, 'hi')).status).toBe(404);
    const listed = await other.request('GET', '/v1/sessions');
    expect(listed.json.sessions.map((s: { id: string }) => s.id)).not.toContain(mine);
  });

  it('409 for a second turn while one runs; the running turn is unaffected', async () => {
    const sessionId = await api.createSession();
    stack.model!.enqueue({ content: [{ type: 'text', text: 'slow answer, streamed slowly' }], delayMs: 60 });
    const first = api.turn(sessionId, 'first');
    for (;;) {
      const s = await api.request('GET', `/v1/sessions/${sessionId}`);
      if (s.json.status === 'running') break;
      await new Promise((r) => setTimeout(r, 10));
    }
    const second = await api.turn(sessionId, 'second');
    expect(second.status).toBe(409);
    expect(second.json.error.code).toBe('session_busy');
    const done = await first;
    expect(done.status).toBe(200);
    expect(done.json.stopReason).toBe('end_turn');
    const messages = await api.messages(sessionId);
    expect(messages.map((m) => m.content[0].text)).toEqual(['first', 'slow answer, streamed slowly']);
  });

  it('lists sessions newest first, paginated with an opaque cursor', async () => {
    const fresh = makeTempDir();
    const own = await startLocalStack({ dataDir: fresh.dir, apiTokens: { t: 'solo' } });
    try {
      const client = apiClient(own.apiUrl, 't');
      const ids = [];
      for (let i = 0; i < 5; i++) ids.push(await client.createSession());
      const page1 = await client.request('GET', '/v1/sessions?limit=2');
      const page2 = await client.request('GET', `/v1/sessions?limit=2&cursor=${page1.json.nextCursor}`);
      const page3 = await client.request('GET', `/v1/sessions?limit=2&cursor=${page2.json.nextCursor}`);
      const seen = [...page1.json.sessions, ...page2.json.sessions, ...page3.json.sessions].map((s: { id: string }) => s.id);
      expect(seen).toEqual([...ids].reverse());
      const bad = await client.request('GET', '/v1/sessions?cursor=garbage');
      expect(bad.status).toBe(400);
    } finally {
      await own.stop();
      fresh.cleanup();
    }
  });
});
