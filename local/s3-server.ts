import S3rver from 's3rver';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { mkdirSync } from 'node:fs';
import { closeServer, listenOnLoopback } from './net/listen.ts';
import type { EmbeddedServer } from './service-child.ts';
import { LOCAL_CREDENTIALS } from './local-credentials.ts';
import { isPostForm, verifyPostForm } from './s3-post-policy.ts';
import { versionedBuckets, type VersionStore } from './s3-versions.ts';
import { raceSafe } from './s3-race-safe.ts';
import { atomicPuts } from './s3-atomic-put.ts';
import { notifyObjectCreated, type S3NotificationRule } from './s3-notifications.ts';
import {
  accessDenied,
  refuse,
  signatureForm,
  verifyHeaderSignature,
  verifyQuerySignature,
  type Refusal,
  type SigningCredentials,
  type Verdict,
} from './sigv4-verify.ts';

/** @internal for tests that sign requests to a stand-in they started */
export { LOCAL_CREDENTIALS as LOCAL_S3_CREDENTIALS } from './local-credentials.ts';

/**
 * An in-process S3-protocol server: s3rver behind a small front that does what s3rver does not
 * (docs/local-stack.md). It refuses, as S3 does, every request that is not signed with the local
 * credentials: SigV4 in the Authorization header, a presigned URL, or a POST form's signed
 * policy, whose conditions it evaluates (s3rver accepts anonymous requests and never checks a
 * V4 signature). And it gives PutObject the conditional semantics of real S3 (`If-None-Match: *`
 * → 412 when the key exists, `If-Match` → 412 when the ETag differs, 404 when there is no key), serialised per key so two
 * racing writers cannot both win; s3rver alone silently overwrites. Buckets named in
 * `versionedBuckets` keep every version and delete marker, as S3 does with versioning enabled
 * (s3-versions.ts). Requests must be path-style.
 */
/** What clients sent to the server since it started (the figure the sync benchmark reports). */
export interface S3Traffic {
  requests: number;
  /** Request body bytes received (uploads), as declared by Content-Length. */
  bytesReceived: number;
  /** Requests by method, e.g. { GET: 3, PUT: 1 }. */
  byMethod: Record<string, number>;
}

export interface S3ServerOptions {
  dir: string;
  buckets: string[];
  port?: number;
  /** The only key requests may be signed with. @default LOCAL_CREDENTIALS */
  credentials?: SigningCredentials;
  /** Buckets with versioning enabled (s3-versions.ts); their older versions are kept in `{dir}-versions`. */
  versionedBuckets?: string[];
  /** Functions invoked when an object is created, as S3's bucket notifications do (s3-notifications.ts). @default none */
  notifications?: S3NotificationRule[];
}

export async function startS3Server(opts: S3ServerOptions): Promise<EmbeddedServer & { traffic(): S3Traffic }> {
  mkdirSync(opts.dir, { recursive: true });
  const s3rver = new S3rver({ directory: opts.dir, silent: true, configureBuckets: opts.buckets.map((name) => ({ name })) });
  atomicPuts(s3rver.store as unknown as Parameters<typeof atomicPuts>[0]);
  await s3rver.configureBuckets();
  const inner = s3rver.callback();
  const versions = versionFront(s3rver, opts.dir, opts.versionedBuckets ?? []);
  const keyLocks = new Map<string, Promise<void>>();

  const traffic: S3Traffic = { requests: 0, bytesReceived: 0, byMethod: {} };

  const credentials = opts.credentials ?? LOCAL_CREDENTIALS;
  const server = createServer((req, res) => {
    countRequest(traffic, req);
    if (opts.notifications?.length) notifyWhenCreated(opts.notifications, req, res);
    void authenticate(req, credentials).then(
      (verdict) => (verdict.ok ? serve(req, res) : refuseRequest(req, res, verdict)),
      (err: unknown) => refuseRequest(req, res, refuse(500, 'InternalError', String(err))),
    );
  });
  const serve = (req: IncomingMessage, res: ServerResponse) => {
    const send: Inner = versions.handles(req) ? (rq, rs) => void versions.serve(rq, rs, inner).catch((err: unknown) => failed(rs, err)) : inner;
    const target = writeTarget(req);
    const conditional = req.method === 'PUT' && (req.headers['if-none-match'] !== undefined || req.headers['if-match'] !== undefined);
    if (!target || (!conditional && send === inner)) return send(req, res);
    const lockKey = `${target.bucket}/${target.key}`;
    const previous = keyLocks.get(lockKey) ?? Promise.resolve();
    const settled = previous
      .then(() => (conditional ? conditionalPut(s3rver, send, target, req, res) : untilSent(send, req, res)))
      .catch((err: unknown) => {
        if (!res.headersSent) {
          res.statusCode = 500;
          res.end(String(err));
        }
      });
    keyLocks.set(lockKey, settled);
    void settled.finally(() => {
      if (keyLocks.get(lockKey) === settled) keyLocks.delete(lockKey);
    });
  };
  const url = await listenOnLoopback(server, opts.port);
  return { url, close: () => closeServer(server), traffic: () => ({ ...traffic, byMethod: { ...traffic.byMethod } }) };
}

/** Versioning for the versioned buckets: older versions go to a second store of s3rver's own kind, in `{dir}-versions`. */
function versionFront(s3rver: S3rver, dir: string, buckets: string[]) {
  const store = s3rver.store as unknown as VersionStore;
  const VersionStoreClass = store.constructor as new (root: string) => VersionStore;
  const versions = new VersionStoreClass(`${dir}-versions`);
  atomicPuts(versions as unknown as Parameters<typeof atomicPuts>[0]);
  return versionedBuckets({ buckets, main: raceSafe(store), versions: raceSafe(versions) });
}

/**
 * The request's signature, checked before s3rver sees it. CORS preflights carry none (browsers
 * never sign them), as with S3; s3rver answers them from the bucket's CORS rules.
 */
async function authenticate(req: IncomingMessage, credentials: SigningCredentials): Promise<Verdict> {
  const signed = { method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers };
  const opts = { credentials, service: 's3', escapePath: false, now: Date.now() };
  switch (signatureForm(signed)) {
    case 'header': {
      const payloadHash = req.headers['x-amz-content-sha256'];
      if (typeof payloadHash !== 'string') return refuse(400, 'InvalidRequest', 'Missing required header for this request: x-amz-content-sha256');
      return verifyHeaderSignature(signed, payloadHash, opts);
    }
    case 'query':
      return verifyQuerySignature(signed, opts);
    default:
      if (req.method === 'OPTIONS') return { ok: true };
      if (isPostForm(req)) return verifyPostForm(req, credentials, opts.now);
      return accessDenied();
  }
}

/** An S3-style XML error; the rest of the body is drained, never stored. */
function refuseRequest(req: IncomingMessage, res: ServerResponse, refusal: Refusal): void {
  req.resume();
  if (res.headersSent) return void res.end();
  res.statusCode = refusal.status;
  res.setHeader('content-type', 'application/xml');
  const escapeXml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  res.end(
    req.method === 'HEAD'
      ? undefined
      : `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${refusal.code}</Code><Message>${escapeXml(refusal.message)}</Message></Error>`,
  );
}

function countRequest(traffic: S3Traffic, req: IncomingMessage): void {
  traffic.requests += 1;
  const method = req.method ?? 'GET';
  traffic.byMethod[method] = (traffic.byMethod[method] ?? 0) + 1;
  // From the header, not a 'data' listener: listening would switch the body to flowing mode
  // before s3rver reads it.
  traffic.bytesReceived += Number(req.headers['content-length'] ?? 0) || 0;
}

type Inner = (req: IncomingMessage, res: ServerResponse) => void;

function failed(res: ServerResponse, err: unknown): void {
  if (res.headersSent) return void res.end();
  res.statusCode = 500;
  res.end(String(err));
}

/** Hands the request on and resolves once its response is sent. */
function untilSent(send: Inner, req: IncomingMessage, res: ServerResponse): Promise<void> {
  return new Promise<void>((resolve) => {
    res.once('finish', resolve);
    res.once('close', resolve);
    send(req, res);
  });
}

/**
 * A PutObject with If-None-Match / If-Match, run while no other write of the same key runs. As
 * S3 does, `If-Match` on a key that does not exist answers 404 NoSuchKey, not 412.
 */
async function conditionalPut(s3rver: S3rver, send: Inner, target: { bucket: string; key: string }, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const ifNoneMatch = req.headers['if-none-match'];
  const ifMatch = req.headers['if-match'];
  const exists = await s3rver.store.existsObject(target.bucket, target.key);
  const etag = exists ? (await s3rver.store.getMetadata(target.bucket, target.key)).etag : undefined;
  if (ifMatch !== undefined && !exists) {
    req.resume();
    return errorResponse(res, 404, 'NoSuchKey', 'The specified key does not exist.');
  }
  const refused = (ifNoneMatch === '*' && exists) || (ifMatch !== undefined && stripQuotes(etag) !== stripQuotes(String(ifMatch)));
  if (refused) {
    req.resume();
    return errorResponse(res, 412, 'PreconditionFailed', 'At least one of the pre-conditions you specified did not hold');
  }
  delete req.headers['if-none-match'];
  delete req.headers['if-match'];
  await untilSent(send, req, res);
}

/** Once a PUT has stored its object (200), the matching notifications go out. */
function notifyWhenCreated(rules: S3NotificationRule[], req: IncomingMessage, res: ServerResponse): void {
  const target = req.method === 'PUT' ? writeTarget(req) : undefined;
  if (!target) return;
  res.once('finish', () => {
    if (res.statusCode === 200) notifyObjectCreated(rules, target.bucket, target.key);
  });
}

/**
 * The key an object write or delete changes, if the request is one: a PUT (not a part upload,
 * which carries uploadId), a DELETE, or the POST completing a multipart upload.
 */
function writeTarget(req: IncomingMessage): { bucket: string; key: string } | undefined {
  const { pathname, searchParams } = new URL(req.url ?? '/', 'http://local');
  const write = (req.method === 'PUT' && !searchParams.has('uploadId')) || req.method === 'DELETE' || (req.method === 'POST' && searchParams.has('uploadId'));
  if (!write || searchParams.has('tagging')) return undefined;
  const [, bucket, ...rest] = pathname.split('/');
  if (!bucket || rest.length === 0) return undefined;
  return { bucket, key: decodeURIComponent(rest.join('/')) };
}

function stripQuotes(value: string | undefined): string | undefined {
  return value?.replace(/^"|"$/g, '');
}

function errorResponse(res: ServerResponse, status: number, code: string, message: string): void {
  res.statusCode = status;
  res.setHeader('content-type', 'application/xml');
  res.end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${message}</Message></Error>`);
}
