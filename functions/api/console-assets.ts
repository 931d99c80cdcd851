import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Context, Hono } from 'hono';
import { pageHeaders } from './page-headers.ts';
import type { ApiEnv } from './route-app.ts';

/** Where the console is served. Its built files (`npm run build:console`) sit in one folder on disk. */
export const CONSOLE_PATH = '/console';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
};

/**
 * The page may load only its own files and call only this origin: the token it holds in session
 * storage cannot be sent anywhere else by an injected script, and no inline script runs.
 */
const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

/**
 * Serves the web console's static files from `dir` (on Lambda the folder shipped beside the
 * bundle, locally `dist/console`): read from disk per request, so the API bundle carries none of
 * them. Hashed assets are cached for a year; `index.html` is revalidated so a deploy shows at once.
 * Without the folder (`dir` undefined or not built) `/console` answers 404 saying how to build it.
 */
export function serveConsole(app: Hono<ApiEnv>, dir: string | undefined): void {
  app.get(CONSOLE_PATH, (c) => c.redirect(`${CONSOLE_PATH}/`, 301));
  app.get(`${CONSOLE_PATH}/*`, async (c) => {
    if (!dir) return notBuilt(c);
    const rel = safeDecode(c.req.path.slice(CONSOLE_PATH.length + 1)) || 'index.html';
    const root = path.resolve(dir);
    const file = path.resolve(root, rel);
    // No way out of the folder, whatever the path holds.
    if (!file.startsWith(root + path.sep)) return c.json({ error: { code: 'not_found', message: 'No such file.' } }, 404);
    const body = await readFile(file).catch(() => undefined);
    if (!body) return rel === 'index.html' ? notBuilt(c) : c.json({ error: { code: 'not_found', message: 'No such file.' } }, 404);
    const immutable = rel.startsWith('assets/');
    return c.body(new Uint8Array(body), 200, {
      'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream',
      ...pageHeaders(CSP, immutable ? 'public, max-age=31536000, immutable' : 'no-cache'),
    });
  });
}

/** A malformed escape reads as a name no file has (a 404, never a 500). */
function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return '\0';
  }
}

function notBuilt(c: Context) {
  return c.json({ error: { code: 'not_found', message: 'The console is not built: run `npm run build:console` (npm start and npm test do).' } }, 404);
}
