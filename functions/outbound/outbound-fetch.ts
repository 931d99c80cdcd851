import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { OutboundPolicy, OutboundTarget } from './outbound-policy.ts';

/** The subset of `fetch` the harness's outbound callers use (hooks, the MCP SDK's transports). */
export type OutboundFetch = (input: string | URL, init?: RequestInit) => Promise<Response>;

export interface OutboundFetchOptions {
  /** An answer longer than this fails while it is read (the caller sees an error naming the limit). */
  maxResponseBytes: number;
}

/**
 * `fetch` bound to the outbound policy: each call resolves and checks its URL (policy.resolve),
 * then connects to exactly the checked address, keeping the URL's name as TLS server name and
 * Host header (node:http with a `lookup` that answers only that address, a fresh connection per
 * call so no pooled socket outlives the check). Redirects are never followed: a 3xx is returned
 * as it is, for the caller to refuse or to send through this function again (checked again).
 * Connection errors name the origin and the address, never anything the remote sent.
 */
export function createOutboundFetch(policy: OutboundPolicy, options: OutboundFetchOptions): OutboundFetch {
  return async (input, init = {}) => {
    const url = new URL(input);
    const target = await policy.resolve(url);
    const body = init.body == null ? undefined : Buffer.from(await new Response(init.body).arrayBuffer());
    return send(
      target,
      { method: (init.method ?? 'GET').toUpperCase(), headers: new Headers(init.headers), body, signal: init.signal ?? undefined },
      options.maxResponseBytes,
    );
  };
}

interface OutgoingRequest {
  method: string;
  headers: Headers;
  body?: Buffer;
  signal?: AbortSignal;
}

function send(target: OutboundTarget, req: OutgoingRequest, maxBytes: number): Promise<Response> {
  const headers: Record<string, string> = { 'accept-encoding': 'identity' };
  req.headers.forEach((value, name) => {
    headers[name] = value;
  });
  if (req.body) headers['content-length'] = String(req.body.length);
  const origin = `${target.url.protocol}//${target.url.host}`;
  return new Promise((resolve, reject) => {
    const request = (target.url.protocol === 'https:' ? https : http).request(
      {
        host: target.host,
        port: target.port,
        path: `${target.url.pathname}${target.url.search}`,
        method: req.method,
        headers,
        signal: req.signal,
        agent: false,
        lookup: pinnedLookup(target),
      },
      (res) => {
        try {
          resolve(toResponse(res, req.method, maxBytes, origin));
        } catch (err) {
          res.destroy();
          reject(err);
        }
      },
    );
    request.on('error', (err: NodeJS.ErrnoException) => {
      if (req.signal?.aborted) return reject(req.signal.reason ?? err);
      reject(new Error(`Could not reach ${origin} (${target.address}): ${err.code ?? err.message}`));
    });
    request.end(req.body);
  });
}

/** A lookup that answers only the address the policy checked, in either callback shape node:net asks for. */
function pinnedLookup(target: OutboundTarget): LookupFunction {
  return (_hostname, options, callback) => {
    if (options.all)
      (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  };
}

function toResponse(res: IncomingMessage, method: string, maxBytes: number, origin: string): Response {
  const status = res.statusCode ?? 0;
  if (status < 200 || status > 599) throw new Error(`${origin} answered an invalid HTTP status`);
  const headers = new Headers();
  for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) headers.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
  const empty = method === 'HEAD' || status === 204 || status === 205 || status === 304;
  if (empty) res.resume();
  // The remote's reason phrase is its own text: it is not passed on (callers quote statusText in errors).
  return new Response(empty ? null : boundedBody(res, maxBytes, origin), { status, headers });
}

/** The answer's bytes as a web stream that errors (and drops the connection) past `maxBytes`. */
function boundedBody(res: IncomingMessage, maxBytes: number, origin: string): ReadableStream<Uint8Array> {
  let settled = false;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      let bytes = 0;
      const fail = (err: Error) => {
        if (settled) return;
        settled = true;
        res.destroy();
        controller.error(err);
      };
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (bytes > maxBytes) return fail(new Error(`${origin} answered more than ${maxBytes} bytes, the limit of an answer`));
        if (!settled) controller.enqueue(new Uint8Array(chunk));
      });
      res.on('end', () => {
        if (settled) return;
        settled = true;
        controller.close();
      });
      res.on('error', () => fail(new Error(`${origin} dropped the connection`)));
      res.on('close', () => fail(new Error(`${origin} dropped the connection`)));
    },
    cancel() {
      settled = true;
      res.destroy();
    },
  });
}
