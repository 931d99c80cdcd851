import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { LocalCredentials } from './local-credentials.ts';

/**
 * Verification of AWS Signature Version 4, for the local stand-ins: the stack's own clients
 * (the AWS SDK) sign every request with the local credentials, so anything unsigned or signed
 * with another key is not one of them. Three forms: the `Authorization` header, a presigned URL
 * (query parameters) and a browser POST form's policy (s3-post-policy.ts). The canonical request
 * is built as the AWS SDK builds it (@smithy/signature-v4).
 */
export type SigningCredentials = LocalCredentials;

/** The request as the server received it: `url` is the raw path and query. */
export interface SignedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
}

export type Refusal = { ok: false; status: number; code: string; message: string };
export type Verdict = { ok: true } | Refusal;

export interface VerifyOptions {
  credentials: SigningCredentials;
  /** The signing service in the credential scope (`s3`, `dynamodb`). */
  service: string;
  /** S3 signs the path as sent; other services encode each segment once more (the SDK's `uriEscapePath`). */
  escapePath: boolean;
  now: number;
}

const ALGORITHM = 'AWS4-HMAC-SHA256';
/** How far a header-signed request's time may be from the server's, as S3 and DynamoDB allow. */
const MAX_SKEW_MS = 15 * 60_000;
const MAX_PRESIGN_SECONDS = 7 * 24 * 3600;

export const refuse = (status: number, code: string, message: string): Refusal => ({ ok: false, status, code, message });
export const accessDenied = (message = 'Access Denied') => refuse(403, 'AccessDenied', message);
const mismatch = () =>
  refuse(403, 'SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided. Check your key and signing method.');

/** Which form of signature a request carries, if any. */
export function signatureForm(req: SignedRequest): 'header' | 'query' | undefined {
  if (req.headers.authorization !== undefined) return 'header';
  if (queryParams(req.url).some(([k]) => k === 'X-Amz-Algorithm')) return 'query';
  return undefined;
}

/**
 * An `Authorization: AWS4-HMAC-SHA256 Credential=…, SignedHeaders=…, Signature=…` request.
 * `payloadHash` is the body's SHA-256 in hex, or what `x-amz-content-sha256` declares (S3).
 */
export function verifyHeaderSignature(req: SignedRequest, payloadHash: string, opts: VerifyOptions): Verdict {
  const auth = /^AWS4-HMAC-SHA256 Credential=([^,\s]+),\s*SignedHeaders=([^,\s]+),\s*Signature=([0-9a-f]{64})$/.exec(String(req.headers.authorization).trim());
  if (!auth)
    return refuse(
      400,
      'AuthorizationHeaderMalformed',
      `The authorization header is malformed; only ${ALGORITHM} with Credential, SignedHeaders and Signature is accepted.`,
    );
  const amzDate = String(req.headers['x-amz-date'] ?? '');
  const time = parseAmzDate(amzDate);
  if (time === undefined) return accessDenied('AWS authentication requires a valid X-Amz-Date header.');
  if (Math.abs(opts.now - time) > MAX_SKEW_MS)
    return refuse(403, 'RequestTimeTooSkewed', 'The difference between the request time and the current time is too large.');
  return verify(req, { credential: auth[1]!, signedHeaders: auth[2]!, signature: auth[3]!, amzDate, payloadHash, dropParam: undefined }, opts);
}

/** A presigned URL: X-Amz-Algorithm, -Credential, -Date, -Expires, -SignedHeaders and -Signature in the query. */
export function verifyQuerySignature(req: SignedRequest, opts: VerifyOptions): Verdict {
  const q = new Map(queryParams(req.url));
  if (q.get('X-Amz-Algorithm') !== ALGORITHM) return refuse(400, 'AuthorizationQueryParametersError', `X-Amz-Algorithm only supports "${ALGORITHM}".`);
  const amzDate = q.get('X-Amz-Date') ?? '';
  const time = parseAmzDate(amzDate);
  const expires = Number(q.get('X-Amz-Expires'));
  const [credential, signedHeaders, signature] = [q.get('X-Amz-Credential'), q.get('X-Amz-SignedHeaders'), q.get('X-Amz-Signature')];
  if (time === undefined || !Number.isInteger(expires) || expires < 1 || expires > MAX_PRESIGN_SECONDS || !credential || !signedHeaders || !signature) {
    return refuse(
      400,
      'AuthorizationQueryParametersError',
      'A presigned URL needs X-Amz-Credential, X-Amz-Date, X-Amz-Expires (1–604800), X-Amz-SignedHeaders and X-Amz-Signature.',
    );
  }
  if (opts.now > time + expires * 1000) return accessDenied('Request has expired');
  const payloadHash = q.get('X-Amz-Content-Sha256') ?? 'UNSIGNED-PAYLOAD';
  return verify(req, { credential, signedHeaders, signature, amzDate, payloadHash, dropParam: 'X-Amz-Signature' }, opts);
}

interface Claimed {
  credential: string;
  signedHeaders: string;
  signature: string;
  amzDate: string;
  payloadHash: string;
  /** The query parameter that carries the signature itself (presigned URLs), left out of the canonical query. */
  dropParam: string | undefined;
}

function verify(req: SignedRequest, claimed: Claimed, opts: VerifyOptions): Verdict {
  const scope = checkScope(claimed.credential, claimed.amzDate, opts);
  if (!scope.ok) return scope;
  const names = claimed.signedHeaders.split(';');
  if (!names.includes('host')) return accessDenied('The host header must be signed.');
  const canonical = [
    req.method,
    canonicalPath(req.url, opts.escapePath),
    canonicalQuery(req.url, claimed.dropParam),
    ...names.map((name) => `${name}:${headerValue(req.headers[name])}`),
    '',
    claimed.signedHeaders,
    claimed.payloadHash,
  ].join('\n');
  const expected = signString(stringToSign(claimed.amzDate, scope.scope, canonical), scope.key);
  return sameHex(expected, claimed.signature) ? { ok: true } : mismatch();
}

/** `AKID/yyyymmdd/region/service/aws4_request`: the local key id, the request's own day, the right service. */
export function checkScope(
  credential: string,
  amzDate: string,
  opts: Pick<VerifyOptions, 'credentials' | 'service'>,
): { ok: true; scope: string; key: Buffer } | Refusal {
  const [accessKeyId, day, region, service, terminator, ...rest] = credential.split('/');
  if (rest.length > 0 || terminator !== 'aws4_request' || !region || !day)
    return refuse(400, 'AuthorizationHeaderMalformed', 'The credential scope must be AKID/yyyymmdd/region/service/aws4_request.');
  if (accessKeyId !== opts.credentials.accessKeyId)
    return refuse(403, 'InvalidAccessKeyId', 'The AWS Access Key Id you provided does not exist in our records.');
  if (service !== opts.service || day !== amzDate.slice(0, 8))
    return refuse(400, 'AuthorizationHeaderMalformed', `The credential scope must name the service "${opts.service}" and the day of X-Amz-Date.`);
  return { ok: true, scope: [day, region, service, terminator].join('/'), key: signingKey(opts.credentials.secretAccessKey, day, region, service) };
}

export function signingKey(secret: string, day: string, region: string, service: string): Buffer {
  const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();
  return hmac(hmac(hmac(hmac(`AWS4${secret}`, day), region), service), 'aws4_request');
}

export function signString(text: string, key: Buffer): string {
  return createHmac('sha256', key).update(text).digest('hex');
}

export function sameHex(expected: string, given: string): boolean {
  const a = Buffer.from(expected, 'utf8');
  const b = Buffer.from(given.toLowerCase(), 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

export const sha256Hex = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

function stringToSign(amzDate: string, scope: string, canonicalRequest: string): string {
  return [ALGORITHM, amzDate, scope, sha256Hex(canonicalRequest)].join('\n');
}

/** `20261201T224500Z` as epoch ms, or undefined. */
export function parseAmzDate(text: string): number | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(text);
  if (!m) return undefined;
  const time = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]));
  return Number.isNaN(time) ? undefined : time;
}

/** RFC 3986 encoding, as the SDK's `escapeUri`. */
const escapeUri = (text: string) => encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

function canonicalPath(url: string, escapePath: boolean): string {
  const raw = url.split('?')[0] || '/';
  if (!escapePath) return raw;
  // The SDK normalises the path (no empty or dot segments), then encodes it once more.
  const segments: string[] = [];
  for (const s of raw.split('/')) {
    if (s === '..') segments.pop();
    else if (s && s !== '.') segments.push(s);
  }
  const normal = `${raw.startsWith('/') ? '/' : ''}${segments.join('/')}${segments.length > 0 && raw.endsWith('/') ? '/' : ''}`;
  return escapeUri(normal).replace(/%2F/g, '/');
}

/** The raw query as (name, value) pairs, percent-decoded (a `+` stays a `+`, as the SDK sends a space as %20). */
export function queryParams(url: string): [string, string][] {
  const query = url.includes('?') ? url.slice(url.indexOf('?') + 1) : '';
  const decode = (s: string) => {
    try {
      return decodeURIComponent(s);
    } catch {
      return s;
    }
  };
  return query
    .split('&')
    .filter(Boolean)
    .map((part) => {
      const eq = part.indexOf('=');
      return eq < 0 ? [decode(part), ''] : [decode(part.slice(0, eq)), decode(part.slice(eq + 1))];
    });
}

function canonicalQuery(url: string, dropParam: string | undefined): string {
  return queryParams(url)
    .filter(([k]) => k !== dropParam)
    .map(([k, v]) => [escapeUri(k), escapeUri(v)] as const)
    .sort(([ak, av], [bk, bv]) => (ak < bk ? -1 : ak > bk ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
}

function headerValue(value: string | string[] | undefined): string {
  const text = Array.isArray(value) ? value.join(',') : (value ?? '');
  return text.trim().replace(/\s+/g, ' ');
}
