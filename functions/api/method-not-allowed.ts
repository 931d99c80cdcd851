import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
/**
 * Finds the methods a path is declared with, from the routes' OpenAPI declarations (the same
 * list the document shows). A `{path}` parameter spans slashes (a workspace file path); others
 * are one segment.
 */
// biome-ignore lint/suspicious/noExplicitAny: any app, whatever its bindings: only its route declarations are read
export function createAllowedMethods(app: OpenAPIHono<any>): (path: string) => string[] {
  let table: { pattern: RegExp; method: string }[] | undefined;
  return (path) => {
    table ??= app.openAPIRegistry.definitions.flatMap((d) => {
      if (d.type !== 'route') return [];
      const source = d.route.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{(\w+)\}/g, (_, name: string) => (name === 'path' ? '.+' : '[^/]+'));
      return [{ pattern: new RegExp(`^${source}$`), method: d.route.method.toUpperCase() }];
    });
    const methods = new Set(table.filter((r) => r.pattern.test(path)).map((r) => r.method));
    if (methods.has('GET')) methods.add('HEAD');
    return [...methods];
  };
}

/**
 * The app's answer to a request no route took: 405 with `Allow` when the path exists with other
 * methods, else 404. Both in the API's one error shape.
 */
export function noRoute(c: Context, allowed: (path: string) => string[]): Response {
  const allow = allowed(c.req.path);
  if (allow.length > 0 && !allow.includes(c.req.method)) {
    c.header('Allow', allow.join(', '));
    return c.json({ error: { code: 'method_not_allowed', message: `${c.req.method} is not allowed on ${c.req.path}; use ${allow.join(', ')}.` } }, 405);
  }
  return c.json({ error: { code: 'not_found', message: `No route ${c.req.method} ${c.req.path}` } }, 404);
}
