import type { Context, MiddlewareHandler } from 'hono';
import { matchedRoutes } from 'hono/route';
import { LimitError } from '../shared/errors.ts';

/**
 * The body a route that declares no limit may carry. Such routes read no body, but a client may
 * still send `{}`, and the `Idempotency-Key` middleware reads whatever a POST carries.
 */
export const DEFAULT_BODY_BYTES = 64 * 1024;

/** The 413 a route answers past its cap; `bytes` is what was declared or counted so far. */
export type TooLarge = (bytes: number, maxBytes: number) => LimitError;

interface BodyCap {
  maxBytes: number;
  tooLarge: TooLarge;
}

const CAP = Symbol('bodyCap');
type Capped = MiddlewareHandler & { [CAP]?: BodyCap };

export const requestTooLarge: TooLarge = (bytes, maxBytes) =>
  new LimitError(`The request body is at least ${bytes} bytes; at most ${maxBytes} are accepted here.`, 'request_too_large');

/**
 * Declares a route's body cap on route middleware (`createRoute({ middleware: [...] })`, or a
 * plain route's handler list): the app's one body-limit layer (limitRequestBodies) finds it on
 * the matched route and enforces it before anything, `Idempotency-Key` included, reads a byte.
 */
export function withBodyCap<M extends MiddlewareHandler>(middleware: M, maxBytes: number, tooLarge: TooLarge = requestTooLarge): M {
  (middleware as Capped)[CAP] = { maxBytes, tooLarge };
  return middleware;
}

/** Route middleware that only declares the route's body cap (for bodies that are not JSON). */
export function bodyLimit(maxBytes: number, tooLarge?: TooLarge): MiddlewareHandler {
  return withBodyCap(async (_c, next) => next(), maxBytes, tooLarge);
}

/**
 * The one body-limit layer, mounted before every route: a declared `Content-Length` past the
 * matched route's cap is refused at once; any other body (chunked, or on Lambda the event's) is
 * read through a counter that fails the read with the route's 413 as soon as the count passes
 * the cap, and cancels the rest. Whoever reads the body (a JSON route, the webhook's signature
 * check, a transcript import, the idempotency hash) therefore never holds more than the cap.
 * What the client still sends is discarded by the server adapter, not kept
 * (docs/api.md, "Request body limits").
 */
export function limitRequestBodies(): MiddlewareHandler {
  return async (c, next) => {
    const cap = routeCap(c);
    const declared = Number(c.req.header('content-length'));
    if (declared > cap.maxBytes) throw cap.tooLarge(declared, cap.maxBytes);
    const body = c.req.raw.body;
    if (body) c.req.raw = new Request(c.req.raw, { body: counted(body, cap), duplex: 'half' } as RequestInit);
    await next();
  };
}

/** The smallest cap declared by the routes matching this request, or the default. */
function routeCap(c: Context): BodyCap {
  let cap: BodyCap | undefined;
  for (const route of matchedRoutes(c)) {
    const declared = (route.handler as Capped)[CAP];
    if (declared && (!cap || declared.maxBytes < cap.maxBytes)) cap = declared;
  }
  return cap ?? { maxBytes: DEFAULT_BODY_BYTES, tooLarge: requestTooLarge };
}

function counted(body: ReadableStream<Uint8Array>, cap: BodyCap): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let seen = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) return controller.close();
      seen += value.byteLength;
      if (seen > cap.maxBytes) {
        // Nothing more is read: the chunk in hand is dropped, the source told to stop.
        reader.cancel().catch(() => undefined);
        controller.error(cap.tooLarge(seen, cap.maxBytes));
        return;
      }
      controller.enqueue(value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
}
