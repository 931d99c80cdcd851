import S3rver from 's3rver';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { mkdirSync } from 'node:fs';
import { closeServer, listenOnLoopback } from './listen.ts';
import type { EmbeddedServer } from './dynamo-server.ts';

/** s3rver only accepts this access key id. */
export const LOCAL_S3_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } as const;

/**
 * An in-process S3-protocol server: s3rver behind a small front that gives PutObject the
 * conditional semantics of real S3 (`If-None-Match: *` → 412 when the key exists, `If-Match`
 * → 412 when the ETag differs), serialised per key so two racing writers cannot both win.
 * s3rver alone silently overwrites (LOCAL-STACK.md). Requests must be path-style.
 */
export async function startS3Server(opts: { dir: string; buckets: string[]; port?: number }): Promise<EmbeddedServer> {
  mkdirSync(opts.dir, { recursive: true });
  const s3rver = new S3rver({ directory: opts.dir, silent: true, configureBuckets: opts.buckets.map((name) => ({ name })) });
  await s3rver.configureBuckets();
  const inner = s3rver.callback();
  const keyLocks = new Map<string, Promise<void>>();

  const server = createServer((req, res) => {
    const ifNoneMatch = req.headers['if-none-match'];
    const ifMatch = req.headers['if-match'];
    const target = req.method === 'PUT' ? objectTarget(req) : undefined;
    if (!target || (!ifNoneMatch && !ifMatch)) return inner(req, res);

    const lockKey = `${target.bucket}/${target.key}`;
    const previous = keyLocks.get(lockKey) ?? Promise.resolve();
    const current = previous.then(async () => {
      const exists = await s3rver.store.existsObject(target.bucket, target.key);
      const etag = exists ? (await s3rver.store.getMetadata(target.bucket, target.key)).etag : undefined;
      const failed =
        (ifNoneMatch === '*' && exists) || (ifMatch !== undefined && (!exists || stripQuotes(etag) !== stripQuotes(String(ifMatch))));
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
    });
    const settled = current.catch((err: unknown) => {
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
  return { url, close: () => closeServer(server) };
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
