import { OpenAPIHono } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import type { AuthVariables } from './auth.ts';
import { withBodyCap } from './body-limit.ts';
import { invalidInput, readJsonBody } from './validate.ts';

export type ApiEnv = { Variables: AuthVariables };

/** What each validation target is called in a 400's message. */
const WHERE = { json: 'body', query: 'query', param: 'path', header: 'header', cookie: 'cookie', form: 'body' } as const;

/**
 * A router whose routes are declared with `createRoute` (docs/api.md): the zod schemas a route
 * validates with are the ones the OpenAPI document shows. A failed validation throws the same
 * 400 `invalid_request` as everywhere else (`Invalid body: "field": …`), answered by `onError`.
 */
export function createRouteApp() {
  return new OpenAPIHono<ApiEnv>({
    defaultHook: (result) => {
      if (!result.success) throw invalidInput(result.error.issues, WHERE[result.target as keyof typeof WHERE] ?? result.target);
    },
  });
}

/**
 * Route middleware for a JSON body: declares the route's cap of `maxBytes` (the app's body-limit
 * layer, body-limit.ts, answers 413 naming it as the bytes arrive), checks the body is plain
 * JSON (validate.ts) and hands it to the route's zod validator. Bodies of another media type are
 * left to the validator's media-type check, which answers 415.
 */
export function jsonBodyLimit(maxBytes: number): MiddlewareHandler {
  return withBodyCap(async (c, next) => {
    const type = c.req.header('content-type');
    if (type && /^application\/([\w.-]+\+)?json\s*(;|$)/i.test(type)) {
      const { text } = await readJsonBody(c);
      // The validator reads the body through the request's cache: it sees exactly what was checked.
      (c.req.bodyCache as Record<string, Promise<unknown>>).text = Promise.resolve(text);
    }
    await next();
  }, maxBytes);
}

/**
 * For a handler that answers with a plain Response (SSE, bytes, or JSON built elsewhere):
 * zod-openapi types a handler's result against the route's JSON schemas, which a stream cannot
 * be checked against. The route's declaration still documents what the Response carries.
 */
export function untypedResponse(res: Response): never {
  return res as never;
}
