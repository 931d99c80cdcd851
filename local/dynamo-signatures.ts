import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import { PassThrough } from 'node:stream';
import { sha256Hex, verifyHeaderSignature, type Refusal, type SigningCredentials } from './sigv4-verify.ts';

/** DynamoDB's own limit on a request body, which dynalite also applies. */
const MAX_REQUEST_BYTES = 16 * 1024 * 1024;

/**
 * Puts a SigV4 check before dynalite's request handler: dynalite makes sure a request carries a
 * well-formed Authorization header but never checks its signature (docs/local-stack.md). Every
 * POST (each DynamoDB call) must be signed with `credentials` over its body, as DynamoDB checks;
 * anything else gets DynamoDB's 400 with its error type, and dynalite never sees it. GETs (its
 * health answer) and CORS preflights pass, as they carry no signature.
 */
export function requireSignatures(server: Server, credentials: SigningCredentials): void {
  const [handler] = server.listeners('request') as RequestListener[];
  if (!handler) throw new Error('dynalite registered no request handler to put the signature check before.');
  server.removeAllListeners('request');
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== 'POST') return handler(req, res);
    void readBody(req).then((body) => {
      if (body === undefined)
        return refuse(res, { ok: false, status: 413, code: 'RequestEntityTooLarge', message: `The request is over ${MAX_REQUEST_BYTES} bytes.` });
      const verdict =
        req.headers.authorization === undefined
          ? { ok: false as const, status: 400, code: 'MissingAuthenticationToken', message: 'Request is missing Authentication Token' }
          : verifyHeaderSignature({ method: 'POST', url: req.url ?? '/', headers: req.headers }, sha256Hex(body), {
              credentials,
              service: 'dynamodb',
              escapePath: true,
              now: Date.now(),
            });
      if (!verdict.ok) return refuse(res, verdict);
      handler(replay(req, body), res);
    });
  });
}

/** The whole body, or undefined past the limit (the rest is drained). */
async function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_REQUEST_BYTES) {
      req.resume();
      return undefined;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** A request dynalite can read again: the same method, URL and headers, and the body already read. */
function replay(req: IncomingMessage, body: Buffer): IncomingMessage {
  const stream = Object.assign(new PassThrough(), { method: req.method, url: req.url, headers: req.headers });
  stream.end(body);
  return stream as unknown as IncomingMessage;
}

/** DynamoDB's error types for what S3 calls by other names. */
const TYPES: Record<string, string> = {
  InvalidAccessKeyId: 'UnrecognizedClientException',
  SignatureDoesNotMatch: 'InvalidSignatureException',
  RequestTimeTooSkewed: 'InvalidSignatureException',
  AuthorizationHeaderMalformed: 'IncompleteSignatureException',
  AccessDenied: 'AccessDeniedException',
  MissingAuthenticationToken: 'MissingAuthenticationTokenException',
  RequestEntityTooLarge: 'RequestEntityTooLarge',
};

function refuse(res: ServerResponse, refusal: Refusal): void {
  res.statusCode = refusal.status === 413 ? 413 : 400;
  res.setHeader('content-type', 'application/x-amz-json-1.0');
  const type = TYPES[refusal.code] ?? 'InvalidSignatureException';
  res.end(JSON.stringify({ __type: `com.amazon.coral.service#${type}`, message: refusal.message }));
}
