import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';

/**
 * Object versioning for the S3 stand-in's versioned buckets, which s3rver lacks: the front keeps
 * the current object in s3rver and every older version, and each delete marker, in a second
 * store of the same kind (its own folder), as S3 does for a bucket with versioning enabled:
 *
 * - a write (PUT, copy, completed multipart upload) over an existing key keeps the object it
 *   replaces as a noncurrent version; the response names the new version (`x-amz-version-id`);
 * - a DELETE without a version id keeps the current object as noncurrent and adds a delete marker;
 * - a DELETE with `versionId` removes that version or marker for good (removing the current one
 *   makes the newest remaining version current again);
 * - `GET ?versions` (ListObjectVersions) lists current objects, noncurrent versions and delete
 *   markers under a prefix, newest first per key, a page of `max-keys` at a time;
 * - a GET or HEAD with the `versionId` of a noncurrent version serves it.
 *
 * Version ids are time-ordered, so "newest" is the greatest. Objects written before the bucket
 * was versioned carry the version id `null`, as in S3.
 */
export interface VersionStore {
  existsObject(bucket: string, key: string): Promise<boolean>;
  getObject(bucket: string, key: string): Promise<StoredObject | null>;
  getMetadata(bucket: string, key: string): Promise<Record<string, string>>;
  putObject(object: { bucket: string; key: string; content: Readable | Buffer; metadata: Record<string, string> }): Promise<unknown>;
  deleteObject(bucket: string, key: string): Promise<void>;
  putBucket(bucket: string): Promise<void>;
  listObjects(bucket: string, options: { prefix?: string }): Promise<{ objects: { key: string; metadata: Record<string, string> }[] }>;
}
interface StoredObject {
  content: Readable | null;
  metadata: Record<string, string>;
}

type Inner = (req: IncomingMessage, res: ServerResponse) => void;

const VERSION_SEPARATOR = '@@v@@';
const CURRENT_SUFFIX = '@@current';
const MARKER_META = 'x-amz-meta-stratus-delete-marker';
const NULL_VERSION = 'null';

let counter = 0;
function newVersionId(): string {
  counter = (counter + 1) % 1_000_000;
  return `${Date.now().toString(36).padStart(9, '0')}${counter.toString(36).padStart(4, '0')}${randomBytes(4).toString('hex')}`;
}

export interface VersionedBuckets {
  /** Whether the front must handle this request itself (versioned bucket, versioned operation). */
  handles(req: IncomingMessage): boolean;
  /** Serves it; called while no other write of the same key runs. */
  serve(req: IncomingMessage, res: ServerResponse, inner: Inner): Promise<void>;
}

export function versionedBuckets(opts: { buckets: readonly string[]; main: VersionStore; versions: VersionStore }): VersionedBuckets {
  return new VersionedBucketFront(opts.buckets, opts.main, opts.versions);
}

class VersionedBucketFront implements VersionedBuckets {
  private readonly versioned: Set<string>;
  private readonly ready: Promise<unknown>;

  constructor(
    buckets: readonly string[],
    private readonly main: VersionStore,
    private readonly versions: VersionStore,
  ) {
    this.versioned = new Set(buckets);
    this.ready = Promise.all(buckets.map((b) => versions.putBucket(b)));
  }

  handles(req: IncomingMessage): boolean {
    const { bucket, key, query } = parse(req);
    if (!bucket || !this.versioned.has(bucket)) return false;
    if (!key) return (req.method === 'GET' && query.has('versions')) || ((req.method === 'GET' || req.method === 'PUT') && query.has('versioning'));
    if (query.has('uploadId')) return req.method === 'POST';
    if (query.has('tagging') || query.has('acl')) return false;
    return req.method === 'PUT' || req.method === 'DELETE' || ((req.method === 'GET' || req.method === 'HEAD') && query.has('versionId'));
  }

  async serve(req: IncomingMessage, res: ServerResponse, inner: Inner): Promise<void> {
    await this.ready;
    const { bucket, key, query } = parse(req);
    if (!key && query.has('versioning')) return versioningStatus(req, res);
    if (!key) return this.listVersions(req, res, bucket!, query);
    const target = { bucket: bucket!, key };
    const id = query.get('versionId');
    if (req.method === 'GET' || req.method === 'HEAD') return this.getVersion(req, res, inner, target, id!);
    if (req.method === 'DELETE') return id ? this.deleteVersion(req, res, target, id) : this.deleteCurrent(req, res, inner, target);
    return this.write(req, res, inner, target);
  }

  private async currentId(target: Target): Promise<string> {
    const pointer = await this.versions.getObject(target.bucket, pointerKey(target.key));
    return pointer?.content ? (await text(pointer.content)) || NULL_VERSION : NULL_VERSION;
  }

  private setCurrent(target: Target, id: string) {
    return this.versions.putObject({ bucket: target.bucket, key: pointerKey(target.key), content: Buffer.from(id), metadata: {} });
  }

  private async isCurrent(target: Target, id: string): Promise<boolean> {
    return (await this.main.existsObject(target.bucket, target.key)) && (await this.currentId(target)) === id;
  }

  /** Keeps the current object (if any) as a noncurrent version; returns its version id. */
  private async keepCurrent(target: Target): Promise<string | undefined> {
    const object = await this.main.getObject(target.bucket, target.key);
    if (!object?.content) return undefined;
    const id = await this.currentId(target);
    await this.versions.putObject({ bucket: target.bucket, key: versionKey(target.key, id), content: object.content, metadata: object.metadata });
    return id;
  }

  private async write(req: IncomingMessage, res: ServerResponse, inner: Inner, target: Target): Promise<void> {
    const kept = await this.keepCurrent(target);
    const id = newVersionId();
    res.setHeader('x-amz-version-id', id);
    // The pointer is written before the answer goes out: a client's next request (a DELETE of this
    // version by id) must find it current, as S3's read-after-write promises.
    await this.setCurrent(target, id);
    const status = await forward(req, res, inner);
    if (status < 300) return;
    if (!kept) return this.versions.deleteObject(target.bucket, pointerKey(target.key));
    await this.setCurrent(target, kept);
    await this.versions.deleteObject(target.bucket, versionKey(target.key, kept));
  }

  private async deleteCurrent(req: IncomingMessage, res: ServerResponse, inner: Inner, target: Target): Promise<void> {
    await this.keepCurrent(target);
    const marker = newVersionId();
    await this.versions.putObject({
      bucket: target.bucket,
      key: versionKey(target.key, marker),
      content: Buffer.alloc(0),
      metadata: { [MARKER_META]: 'true' },
    });
    await this.versions.deleteObject(target.bucket, pointerKey(target.key));
    res.setHeader('x-amz-delete-marker', 'true');
    res.setHeader('x-amz-version-id', marker);
    await forward(req, res, inner);
  }

  private async deleteVersion(req: IncomingMessage, res: ServerResponse, target: Target, id: string): Promise<void> {
    res.setHeader('x-amz-version-id', id);
    if (await this.isCurrent(target, id)) {
      // Answered once the newest older version is current again, so the next read finds it.
      await this.main.deleteObject(target.bucket, target.key);
      await this.promoteNewest(target);
    } else {
      const stored = await this.versions.getObject(target.bucket, versionKey(target.key, id)).catch(() => null);
      if (stored?.metadata[MARKER_META]) res.setHeader('x-amz-delete-marker', 'true');
      stored?.content?.destroy();
      await this.versions.deleteObject(target.bucket, versionKey(target.key, id));
    }
    req.resume();
    res.statusCode = 204;
    res.end();
  }

  /** After the current version is deleted by id, the newest remaining object version (not a marker) becomes current. */
  private async promoteNewest(target: Target): Promise<void> {
    const [newest] = (await this.noncurrent(target.bucket, `${target.key}${VERSION_SEPARATOR}`)).filter((v) => v.key === target.key);
    await this.versions.deleteObject(target.bucket, pointerKey(target.key));
    if (!newest || newest.marker) return;
    const stored = await this.versions.getObject(target.bucket, versionKey(target.key, newest.id));
    if (!stored?.content) return;
    await this.main.putObject({ bucket: target.bucket, key: target.key, content: stored.content, metadata: stored.metadata });
    await this.versions.deleteObject(target.bucket, versionKey(target.key, newest.id));
    await this.setCurrent(target, newest.id);
  }

  /** Noncurrent versions and markers under a prefix, by key, newest first. */
  private async noncurrent(bucket: string, prefix: string): Promise<VersionEntry[]> {
    const { objects } = await this.versions.listObjects(bucket, { prefix });
    return objects
      .filter((o) => o.key.includes(VERSION_SEPARATOR))
      .map((o) => {
        const at = o.key.lastIndexOf(VERSION_SEPARATOR);
        return {
          key: o.key.slice(0, at),
          id: o.key.slice(at + VERSION_SEPARATOR.length),
          marker: o.metadata[MARKER_META] === 'true',
          latest: false,
          metadata: o.metadata,
        };
      })
      .sort((a, b) => (a.key === b.key ? (a.id < b.id ? 1 : -1) : a.key < b.key ? -1 : 1));
  }

  private async listVersions(req: IncomingMessage, res: ServerResponse, bucket: string, query: URLSearchParams): Promise<void> {
    const prefix = query.get('prefix') ?? '';
    const current: VersionEntry[] = [];
    for (const o of (await this.main.listObjects(bucket, { prefix })).objects) {
      current.push({ key: o.key, id: await this.currentId({ bucket, key: o.key }), marker: false, latest: true, metadata: o.metadata });
    }
    const all = mergeNewestFirst(current, await this.noncurrent(bucket, prefix));
    req.resume();
    res.statusCode = 200;
    res.setHeader('content-type', 'application/xml');
    res.end(listVersionsXml(bucket, prefix, page(all, query)));
  }

  private async getVersion(req: IncomingMessage, res: ServerResponse, inner: Inner, target: Target, id: string): Promise<void> {
    if (await this.isCurrent(target, id)) return void (await forward(req, res, inner));
    const stored = await this.versions.getObject(target.bucket, versionKey(target.key, id)).catch(() => null);
    req.resume();
    if (!stored || stored.metadata[MARKER_META]) {
      stored?.content?.destroy();
      res.statusCode = stored ? 405 : 404;
      res.setHeader('content-type', 'application/xml');
      return void res.end(
        req.method === 'HEAD'
          ? undefined
          : errorXml(stored ? 'MethodNotAllowed' : 'NoSuchVersion', 'The specified version does not exist or is a delete marker.'),
      );
    }
    res.statusCode = 200;
    for (const name of ['content-type', 'content-length', 'etag', 'last-modified'])
      if (stored.metadata[name]) res.setHeader(name, String(stored.metadata[name]));
    res.setHeader('x-amz-version-id', id);
    if (req.method === 'HEAD' || !stored.content) return void (stored.content?.destroy(), res.end());
    stored.content.pipe(res);
  }
}

const pointerKey = (key: string) => `${key}${CURRENT_SUFFIX}`;
const versionKey = (key: string, id: string) => `${key}${VERSION_SEPARATOR}${id}`;

type Target = { bucket: string; key: string };
interface VersionEntry {
  key: string;
  id: string;
  marker: boolean;
  latest: boolean;
  metadata: Record<string, string>;
}

function parse(req: IncomingMessage): { bucket?: string; key?: string; query: URLSearchParams } {
  const { pathname, searchParams } = new URL(req.url ?? '/', 'http://local');
  const [, bucket, ...rest] = pathname.split('/');
  const key = rest.length ? decodeURIComponent(rest.join('/')) : undefined;
  return { bucket: bucket || undefined, key: key || undefined, query: searchParams };
}

/** Runs the request through s3rver and resolves with its status once the response is sent. */
function forward(req: IncomingMessage, res: ServerResponse, inner: Inner): Promise<number> {
  return new Promise((resolve) => {
    res.once('finish', () => resolve(res.statusCode));
    res.once('close', () => resolve(res.statusCode));
    inner(req, res);
  });
}

async function text(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

/** Per key: the current object, then older versions and markers newest first; a key's newest marker is latest when no object is current. */
function mergeNewestFirst(current: VersionEntry[], older: VersionEntry[]): VersionEntry[] {
  const byKey = new Map<string, VersionEntry[]>();
  for (const entry of [...current, ...older]) byKey.set(entry.key, [...(byKey.get(entry.key) ?? []), entry]);
  return [...byKey.keys()].sort().flatMap((key) => {
    const entries = byKey.get(key)!;
    if (!entries.some((e) => e.latest)) entries[0]!.latest = true;
    return entries;
  });
}

/** A page of at most `max-keys` entries after `key-marker` / `version-id-marker`. */
function page(all: VersionEntry[], query: URLSearchParams): { entries: VersionEntry[]; next?: VersionEntry; maxKeys: number } {
  const maxKeys = Math.min(1000, Number(query.get('max-keys') ?? 1000) || 1000);
  const keyMarker = query.get('key-marker');
  const idMarker = query.get('version-id-marker');
  // Markers are positions, as in S3: they hold when the entry they name was deleted meanwhile (newest first = greatest id first).
  const after = (e: VersionEntry) => !keyMarker || e.key > keyMarker || (e.key === keyMarker && idMarker !== null && e.id < idMarker);
  let start = all.findIndex(after);
  if (start < 0) start = all.length;
  const entries = all.slice(start, start + maxKeys);
  return { entries, next: start + maxKeys < all.length ? entries.at(-1) : undefined, maxKeys };
}

function listVersionsXml(bucket: string, prefix: string, { entries, next, maxKeys }: ReturnType<typeof page>): string {
  const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  const modified = (e: VersionEntry) => new Date(e.metadata['last-modified'] ?? Date.now()).toISOString();
  const body = entries
    .map((e) =>
      e.marker
        ? `<DeleteMarker><Key>${esc(e.key)}</Key><VersionId>${e.id}</VersionId><IsLatest>${e.latest}</IsLatest><LastModified>${modified(e)}</LastModified></DeleteMarker>`
        : `<Version><Key>${esc(e.key)}</Key><VersionId>${e.id}</VersionId><IsLatest>${e.latest}</IsLatest><LastModified>${modified(e)}</LastModified><ETag>${esc(String(e.metadata.etag ?? ''))}</ETag><Size>${Number(e.metadata['content-length'] ?? 0)}</Size><StorageClass>STANDARD</StorageClass></Version>`,
    )
    .join('');
  const truncation = next
    ? `<IsTruncated>true</IsTruncated><NextKeyMarker>${esc(next.key)}</NextKeyMarker><NextVersionIdMarker>${next.id}</NextVersionIdMarker>`
    : '<IsTruncated>false</IsTruncated>';
  return `<?xml version="1.0" encoding="UTF-8"?><ListVersionsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>${esc(bucket)}</Name><Prefix>${esc(prefix)}</Prefix><MaxKeys>${maxKeys}</MaxKeys>${truncation}${body}</ListVersionsResult>`;
}

/**
 * Get/PutBucketVersioning on a versioned bucket: versioning is the stand-in's configuration, so
 * GET says Enabled and a PUT that enables it is accepted (what a bucket made by CreateBucket then
 * PutBucketVersioning expects); suspending it is not implemented.
 */
async function versioningStatus(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = await text(req);
  res.setHeader('content-type', 'application/xml');
  if (req.method === 'GET') {
    res.statusCode = 200;
    return void res.end('<?xml version="1.0" encoding="UTF-8"?><VersioningConfiguration><Status>Enabled</Status></VersioningConfiguration>');
  }
  const enables = /<Status>Enabled<\/Status>/.test(body);
  res.statusCode = enables ? 200 : 501;
  res.end(enables ? undefined : errorXml('NotImplemented', 'The stand-in keeps versioning enabled on this bucket; it cannot be suspended.'));
}

function errorXml(code: string, message: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${message}</Message></Error>`;
}
