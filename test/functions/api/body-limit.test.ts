import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { bodyLimit, DEFAULT_BODY_BYTES, limitRequestBodies } from '../../../functions/api/body-limit.ts';
import { StratusError } from '../../../functions/shared/errors.ts';

/** A body of `total` bytes in 1 KiB chunks that records how much was pulled and whether it was cancelled. */
function source(total: number) {
  const seen = { pulled: 0, cancelled: false };
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (seen.pulled >= total) return controller.close();
        const n = Math.min(1024, total - seen.pulled);
        seen.pulled += n;
        controller.enqueue(new Uint8Array(n).fill(0x20));
      },
      cancel() {
        seen.cancelled = true;
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, seen };
}

function appWithCaps() {
  const app = new Hono();
  app.use('*', limitRequestBodies());
  app.post('/small', bodyLimit(4 * 1024), async (c) => c.json({ read: (await c.req.arrayBuffer()).byteLength }));
  // Two matching routes: the smaller cap holds.
  app.post('/both/*', bodyLimit(10 * 1024));
  app.post('/both/inner', bodyLimit(2 * 1024), async (c) => c.json({ read: (await c.req.arrayBuffer()).byteLength }));
  app.post('/undeclared', async (c) => c.json({ read: (await c.req.text()).length }));
  app.onError((err, c) =>
    err instanceof StratusError ? c.json({ code: err.code, message: err.message }, err.status as 413) : c.json({ crash: String(err) }, 500),
  );
  return app;
}

const post = (app: Hono, path: string, body: ReadableStream<Uint8Array>, headers: Record<string, string> = {}) =>
  app.request(path, { method: 'POST', body, headers, duplex: 'half' } as RequestInit);

describe('the body-limit layer', () => {
  it("reads a chunked body up to its route's cap, and refuses the byte past it with a 413 naming the cap, reading no further", async () => {
    const app = appWithCaps();
    const exact = source(4 * 1024);
    expect(await (await post(app, '/small', exact.stream)).json()).toEqual({ read: 4096 });

    const over = source(100 * 1024 * 1024);
    const res = await post(app, '/small', over.stream);
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ code: 'request_too_large', message: 'The request body is at least 5120 bytes; at most 4096 are accepted here.' });
    expect(over.seen.pulled).toBeLessThanOrEqual(6 * 1024);
    expect(over.seen.cancelled).toBe(true);
  });

  it('refuses a declared Content-Length past the cap without reading the body at all', async () => {
    const app = appWithCaps();
    const body = source(8 * 1024);
    const res = await post(app, '/small', body.stream, { 'content-length': String(8 * 1024) });
    expect(res.status).toBe(413);
    expect(((await res.json()) as { message: string }).message).toBe('The request body is at least 8192 bytes; at most 4096 are accepted here.');
    expect(body.seen.pulled).toBe(0);
  });

  it('applies the smallest cap of the matching routes, and the default to a route that declares none', async () => {
    const app = appWithCaps();
    expect((await post(app, '/both/inner', source(3 * 1024).stream)).status).toBe(413);
    expect((await post(app, '/both/inner', source(2 * 1024).stream)).status).toBe(200);
    expect((await post(app, '/undeclared', source(DEFAULT_BODY_BYTES).stream)).status).toBe(200);
    const res = await post(app, '/undeclared', source(DEFAULT_BODY_BYTES + 1).stream);
    expect(res.status).toBe(413);
    expect(((await res.json()) as { message: string }).message).toContain(`at most ${DEFAULT_BODY_BYTES} are accepted here`);
  });
});
