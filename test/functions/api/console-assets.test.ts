import { OpenAPIHono } from '@hono/zod-openapi';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { serveConsole } from '../../../functions/api/console-assets.ts';
import type { ApiEnv } from '../../../functions/api/route-app.ts';
import { makeTempDir } from '../../support/temp-dir.ts';

/** The console's static files: served from a folder on disk, never from outside it. */
describe('serving the console', () => {
  const tmp = makeTempDir();
  const dir = path.join(tmp.dir, 'console');
  mkdirSync(path.join(dir, 'assets'), { recursive: true });
  writeFileSync(path.join(dir, 'index.html'), '<!doctype html><div id="app"></div>');
  writeFileSync(path.join(dir, 'assets', 'index-abc123.js'), 'console.log(1)');
  writeFileSync(path.join(tmp.dir, 'secret.txt'), 'not for the browser');
  const appWith = (folder: string | undefined) => {
    const app = new OpenAPIHono<ApiEnv>();
    serveConsole(app, folder);
    return app;
  };

  it('serves the page (revalidated, with a CSP allowing only its own origin) and hashed assets (cached for a year)', async () => {
    const app = appWith(dir);
    const page = await app.request('/console/');
    expect(page.status).toBe(200);
    expect(await page.text()).toBe('<!doctype html><div id="app"></div>');
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('cache-control')).toBe('no-cache');
    expect(page.headers.get('content-security-policy')).toContain("connect-src 'self'");
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self';");
    expect([page.headers.get('x-content-type-options'), page.headers.get('x-frame-options'), page.headers.get('referrer-policy')]).toEqual([
      'nosniff',
      'DENY',
      'no-referrer',
    ]);
    const asset = await app.request('/console/assets/index-abc123.js');
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    const bare = await app.request('/console');
    expect([bare.status, bare.headers.get('location')]).toEqual([301, '/console/']);
  });

  it('answers 404 for a missing file, an escape from the folder, or a malformed escape; and says how to build when unbuilt', async () => {
    const app = appWith(dir);
    for (const p of ['/console/assets/nope.js', '/console/..%2fsecret.txt', '/console/%2e%2e/secret.txt', '/console/%E0%A4%A']) {
      const res = await app.request(p);
      expect(res.status, p).toBe(404);
      expect(await res.text()).not.toContain('not for the browser');
    }
    const unbuilt = await appWith(undefined).request('/console/');
    expect(unbuilt.status).toBe(404);
    expect(((await unbuilt.json()) as { error: { message: string } }).error.message).toContain('npm run build:console');
    const empty = await appWith(path.join(tmp.dir, 'missing')).request('/console/');
    expect(((await empty.json()) as { error: { message: string } }).error.message).toContain('npm run build:console');
  });
});
