import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import createClient from 'openapi-fetch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiFetch } from '../../cli/api-fetch.ts';

/** What Lambda checks behind CloudFront's origin access control: the header equals the body's SHA-256. */
describe('the CLI sends the payload hash a CloudFront-fronted stack needs', () => {
  let server: Server;
  let url: string;
  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        res.setHeader('content-type', 'application/json');
        res.end(
          JSON.stringify({ sent: req.headers['x-amz-content-sha256'] ?? null, actual: createHash('sha256').update(body).digest('hex'), length: body.length }),
        );
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('hashes string and binary bodies', async () => {
    for (const body of [JSON.stringify({ prompt: 'héllo' }), new Uint8Array([0, 1, 2, 255])]) {
      const echo = (await (await apiFetch(`${url}/x`, { method: 'POST', body })).json()) as { sent: string; actual: string; length: number };
      expect(echo.length).toBeGreaterThan(0);
      expect(echo.sent).toBe(echo.actual);
    }
  });

  it('hashes the bodies the typed client serialises', async () => {
    const client = createClient<Record<string, never>>({ baseUrl: url, fetch: apiFetch });
    const { data } = await (client as unknown as { POST: (p: string, o: unknown) => Promise<{ data: { sent: string; actual: string } }> }).POST(
      '/v1/sessions',
      { body: { title: 't' } },
    );
    expect(data.sent).toBe(data.actual);
  });

  it('sends no hash without a body', async () => {
    const echo = (await (await apiFetch(`${url}/x`)).json()) as { sent: string | null };
    expect(echo.sent).toBeNull();
  });
});
