import S3rver from 's3rver';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { mkdirSync } from 'node:fs';
import { closeServer, listenOnLoopback } from './net/listen.ts';
import type { EmbeddedServer } from './service-child.ts';

/** s3rver only accepts this access key id. */
export const LOCAL_S3_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } as const;

/**
 * An in-process S3-protocol server: s3rver behind a small front that gives PutObject the
 * conditional semantics of real S3 (`If-None-Match: *` → 412 when the key exists, `If-Match`
 * → 412 when the ETag differs), serialised per key so two racing writers cannot both win.
 * s3rver alone silently overwrites (docs/local-stack.md). Requests must be path-style.
 */
/** What clients sent to the server since it started (the figure the sync benchmark reports). */
export interface S3Traffic {
  requests: number;
  /** Request body bytes received (uploads), as declared by Content-Length. */
  bytesReceived: number;
  /** Requests by method, e.g. { GET: 3, PUT: 1 }. */
  byMethod: Record<string, number>;
}

export async function startS3Server(opts: {
  dir: string;
  buckets: string[];
  port?: number;
}): Promise<EmbeddedServer & { traffic(): S3Traffic }> {
  mkdirSync(opts.dir, { recursive: true });
  const s3rver = new S3rver({ directory: opts.dir, silent: true, configureBuckets: opts.buckets.map((name) => ({ name })) });
  await s3rver.configureBuckets();
  const inner = s3rver.callback();
  const keyLocks = new Map<string, Promise<void>>();

  const traffic: S3Traffic = { requests: 0, bytesReceived: 0, byMethod: {} };

  const server = createServer((req, res) => {
    countRequest(traffic, req);
    const target = req.method === 'PUT' ? objectTarget(req) : undefined;
    if (!target || (!req.headers['if-none-match'] && !req.headers['if-match'])) return inner(req, res);
    const lockKey = `${target.bucket}/${target.key}`;
    const previous = keyLocks.get(lockKey) ?? Promise.resolve();
    const settled = previous
      .then(() => conditionalPut(s3rver, inner, target, req, res))
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
  });
  const url = await listenOnLoopback(server, opts.port);
  return { url, close: () => closeServer(server), traffic: () => ({ ...traffic, byMethod: { ...traffic.byMethod } }) };
}

function countRequest(traffic: S3Traffic, req: IncomingMessage): void {
  traffic.requests += 1;
  const method = req.method ?? 'GET';
  traffic.byMethod[method] = (traffic.byMethod[method] ?? 0) + 1;
  // From the header, not a 'data' listener: listening would switch the body to flowing mode
  // before s3rver reads it.
  traffic.bytesReceived += Number(req.headers['content-length'] ?? 0) || 0;
}

/** A PutObject with If-None-Match / If-Match, run while no other write of the same key runs. */
async function conditionalPut(
  s3rver: S3rver,
  inner: ReturnType<S3rver['callback']>,
  target: { bucket: string; key: string },
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const ifNoneMatch = req.headers['if-none-match'];
  const ifMatch = req.headers['if-match'];
  const exists = await s3rver.store.existsObject(target.bucket, target.key);
  const etag = exists ? (await s3rver.store.getMetadata(target.bucket, target.key)).etag : undefined;
  const failed = (ifNoneMatch === '*' && exists) || (ifMatch !== undefined && (!exists || stripQuotes(etag) !== stripQuotes(String(ifMatch))));
  if (failed) {
    req.resume();
    preconditionFailed(res);
    return;
  }
  delete req.headers['if-none-match'];
  delete req.headers['if-match'];
  await new Promise<void>((resolve) => {
    res.once('finish', resolve);
    res.once('close', resolve);
    inner(req, res);
  });
}

function objectTarget(req: IncomingMessage): { bucket: string; key: string } | undefined {
  const { pathname, searchParams } = new URL(req.url ?? '/', 'http://local');
  // Multipart part uploads carry uploadId/partNumber; they are not conditional object writes.
  if (searchParams.has('uploadId')) return undefined;
  const [, bucket, ...rest] = pathname.split('/');
  if (!bucket || rest.length === 0) return undefined;
  return { bucket, key: decodeURIComponent(rest.join('/')) };
}

function stripQuotes(value: string | undefined): string | undefined {
  return value?.replace(/^"|"$/g, '');
}

function preconditionFailed(res: ServerResponse): void {
  res.statusCode = 412;
  res.setHeader('content-type', 'application/xml');
  res.end(
    '<?xml version="1.0" encoding="UTF-8"?><Error><Code>PreconditionFailed</Code>' +
      '<Message>At least one of the pre-conditions you specified did not hold</Message></Error>',
  );
}
