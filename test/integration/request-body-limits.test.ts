import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chunkedUpload, peakRssBytes } from '../support/chunked-upload.ts';
import { apiClient } from '../support/api-client.ts';
import { startStackProcess, type StackProcess } from '../support/stack-process.ts';
import { makeTempDir } from '../support/temp-dir.ts';

const MB = 1024 * 1024;
/** Far past every cap, and more than the process could buffer unnoticed. */
const HUGE = 300 * MB;

/**
 * Bodies without a Content-Length against `npm start`'s API in its own process: each is refused
 * with its route's 413 as soon as the cap has arrived, while the client is still sending, and the
 * process never holds the body (its peak RSS grows by far less than what was sent).
 */
describe("chunked request bodies past their route's cap", () => {
  const tmp = makeTempDir();
  let stack: StackProcess;
  beforeAll(async () => {
    stack = await startStackProcess(tmp.dir, { STRATUS_GITHUB_WEBHOOK_SECRET: 'whsec-limits' });
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
    tmp.cleanup();
  });

  it("the webhook answers 413 at GitHub's 25 MB before the signature check, without holding the rest", { timeout: 120_000 }, async () => {
    const peakBefore = await peakRssBytes(stack.child.pid!);
    const res = await chunkedUpload(
      `${stack.apiUrl}/v1/github/webhook`,
      {
        'content-type': 'application/json',
        'x-github-event': 'issues',
        'x-github-delivery': 'd-huge',
        'x-hub-signature-256': `sha256=${'0'.repeat(64)}`,
      },
      HUGE,
    );
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body)).toEqual({
      error: { code: 'request_too_large', message: expect.stringMatching(new RegExp(`^A webhook payload is at most ${25 * MB} bytes`)) },
    });
    expect(res.sentAll).toBe(false);
    expect(res.sentBeforeAnswer).toBeLessThan(100 * MB);
    expect((await peakRssBytes(stack.child.pid!)) - peakBefore).toBeLessThan(150 * MB);
  });

  it('a JSON route with an Idempotency-Key answers 413 naming its own cap, not a larger one', { timeout: 120_000 }, async () => {
    const api = apiClient(stack.apiUrl, stack.token);
    const sessionId = await api.createSession();
    const peakBefore = await peakRssBytes(stack.child.pid!);
    const res = await chunkedUpload(
      `${stack.apiUrl}/v1/sessions/${sessionId}/turns`,
      {
        authorization: `Bearer ${stack.token}`,
        'content-type': 'application/json',
        'idempotency-key': 'huge-turn',
      },
      HUGE,
    );
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body)).toEqual({
      error: { code: 'request_too_large', message: expect.stringMatching(new RegExp(`at most ${2 * MB} are accepted here\\.$`)) },
    });
    expect(res.sentAll).toBe(false);
    expect(res.sentBeforeAnswer).toBeLessThan(100 * MB);
    expect((await peakRssBytes(stack.child.pid!)) - peakBefore).toBeLessThan(150 * MB);
    // The key was never claimed: the same key with a proper body runs.
    const retry = await api.request('POST', `/v1/sessions/${sessionId}/turns`, { prompt: 'x' }, { 'idempotency-key': 'huge-turn', prefer: 'respond-async' });
    expect(retry.status).toBe(202);
  });

  it('a transcript import stops at its 16 MiB, and a route that takes no body at 64 KiB', { timeout: 120_000 }, async () => {
    const auth = { authorization: `Bearer ${stack.token}` };
    const sessionId = await apiClient(stack.apiUrl, stack.token).createSession();
    for (const [path, headers, cap] of [
      ['/v1/sessions/import', { ...auth, 'content-type': 'application/x-ndjson' }, 16 * MB],
      [`/v1/sessions/${sessionId}/compact`, { ...auth, 'content-type': 'application/json', 'idempotency-key': 'huge-compact' }, 64 * 1024],
    ] as const) {
      const res = await chunkedUpload(`${stack.apiUrl}${path}`, headers, HUGE);
      expect([path, res.status, res.sentAll]).toEqual([path, 413, false]);
      expect(JSON.parse(res.body).error.message).toMatch(new RegExp(`at most ${cap} are accepted here\\.$`));
    }
  });
});
