import { GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, NoSuchKey, PutObjectCommand, S3ServiceException, type S3Client } from '@aws-sdk/client-s3';
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { Readable } from 'node:stream';
import type { Delta, SnapshotManifest } from './manifest.ts';
import { workspacePrefix } from '../common/workspace-prefix.ts';

/**
 * Thrown when a version already exists: someone else published from the same base. It leaves the
 * runner as the wire code `conflict` (runner.ts), which the harness decodes into its own
 * WorkspaceConflictError (functions/runner-client/runner-errors.ts).
 */
export class VersionConflictError extends Error {
  constructor(
    id: string,
    readonly version: number,
  ) {
    super(`Workspace ${id} already has version ${version}: it changed concurrently. Reload and retry.`);
    this.name = 'VersionConflictError';
  }
}

/** Thrown when a version cannot be reconstructed from what is stored. */
export class WorkspaceMissingError extends Error {
  override name = 'WorkspaceMissingError';
}

const pad = (v: number) => String(v).padStart(10, '0');
const DELTA_KEY = /\/deltas\/(\d{10})\.json$/;
const SNAPSHOT_KEY = /\/snapshots\/(\d{10})\.([A-Za-z0-9]+)\.json$/;
/** Blobs above this size are looked for (HEAD) before they are sent; smaller ones are sent create-only at once. */
const HEAD_FIRST_BYTES = 256 * 1024;

/**
 * The S3 side of one workspace (every key under `workspaces/{id}/`, the prefix a session's
 * scoped credentials allow):
 *   deltas/{version}.json              version N's change from N-1; create-only (the conflict point)
 *   blobs/{sha256}                     bodies of files changed by deltas
 *   snapshots/{version}.{nonce}.json   full entries at a version, with offsets into ...
 *   snapshots/{version}.{nonce}.pack   ... every distinct body, concatenated (one GET for a cold start)
 *   tasks/{taskId}.output|.json        background tasks, for runners that do not hold them (ops/tasks/task-mirror.ts)
 *   uploads/…, exports/…               staged imports and produced archives
 */
export class RemoteWorkspace {
  readonly prefix: string;

  constructor(
    /** The workspace's own client (its scoped credentials); the mailbox proxy writes with it too. */
    readonly s3: S3Client,
    readonly bucket: string,
    readonly id: string,
  ) {
    this.prefix = workspacePrefix(id);
  }

  key(rel: string): string {
    return `${this.prefix}${rel}`;
  }

  async getDelta(version: number): Promise<Delta> {
    const text = await this.getText(this.key(`deltas/${pad(version)}.json`)).catch((err: unknown) => {
      if (isNotFound(err)) throw new WorkspaceMissingError(`Workspace ${this.id} has no version ${version}.`);
      throw err;
    });
    return JSON.parse(text) as Delta;
  }

  /**
   * The newest published version, knowing `known` exists: lists only the delta keys after it
   * (the names are zero-padded, so S3's order is version order).
   */
  async latestVersion(known: number): Promise<number> {
    let latest = known;
    let token: string | undefined;
    do {
      const page = await this.s3.send(
        new ListObjectsV2Command({
          Bucket: this.bucket,
          Prefix: this.key('deltas/'),
          StartAfter: this.key(`deltas/${pad(known)}.json`),
          ContinuationToken: token,
        }),
      );
      for (const o of page.Contents ?? []) {
        const m = DELTA_KEY.exec(o.Key ?? '');
        if (m) latest = Math.max(latest, Number(m[1]));
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return latest;
  }

  /** Claims `delta.version`; a version that already exists means a concurrent writer won. */
  async putDelta(delta: Delta): Promise<number> {
    const body = JSON.stringify(delta);
    try {
      await this.put(this.key(`deltas/${pad(delta.version)}.json`), body, { create: true, contentType: 'application/json' });
    } catch (err) {
      if (isPreconditionFailed(err)) throw new VersionConflictError(this.id, delta.version);
      throw err;
    }
    return Buffer.byteLength(body);
  }

  async getBlobStream(sha256: string): Promise<Readable> {
    return this.getStream(this.key(`blobs/${sha256}`));
  }

  /**
   * Uploads a file as a blob unless it is already there; returns the bytes sent. The PUT is
   * create-only, so a body already stored is refused, not written twice: a large body is looked
   * for first (a HEAD instead of sending it for nothing), a small one goes straight up (its
   * refusal costs what the HEAD would, and the usual new body saves a request).
   */
  async putBlobFromFile(sha256: string, file: string, size: number): Promise<number> {
    const key = this.key(`blobs/${sha256}`);
    if (size > HEAD_FIRST_BYTES && (await this.exists(key))) return 0;
    try {
      // A small body is read at once: cheaper than a stream for a few kilobytes.
      if (size <= HEAD_FIRST_BYTES) await this.put(key, await readFile(file), { create: true });
      else await this.put(key, createReadStream(file), { create: true, contentLength: size });
    } catch (err) {
      // Same content, same key: another writer uploading it first is fine.
      if (!isPreconditionFailed(err)) throw err;
      return 0;
    }
    return size;
  }

  /**
   * The newest snapshot at or below `maxVersion` that belongs to the published history (its
   * version's delta names its nonce; snapshots of a writer that lost a race are ignored).
   */
  async latestSnapshot(maxVersion: number): Promise<SnapshotManifest | undefined> {
    const candidates: { version: number; nonce: string; key: string }[] = [];
    let token: string | undefined;
    do {
      const page = await this.s3.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: this.key('snapshots/'), ContinuationToken: token }));
      for (const o of page.Contents ?? []) {
        const m = SNAPSHOT_KEY.exec(o.Key ?? '');
        if (m && Number(m[1]) <= maxVersion) candidates.push({ version: Number(m[1]), nonce: m[2]!, key: o.Key! });
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    candidates.sort((a, b) => b.version - a.version);
    for (const c of candidates) {
      const delta = await this.getDelta(c.version).catch(() => undefined);
      if (delta?.snapshot === c.nonce) return JSON.parse(await this.getText(c.key)) as SnapshotManifest;
    }
    return undefined;
  }

  /** Writes the pack first, then its manifest, so a manifest always has its pack. */
  async putSnapshot(manifest: SnapshotManifest, pack: Readable, packSize: number): Promise<number> {
    const base = `snapshots/${pad(manifest.version)}.${manifest.nonce}`;
    await this.put(this.key(`${base}.pack`), pack, { contentLength: packSize });
    const body = JSON.stringify(manifest);
    await this.put(this.key(`${base}.json`), body, { contentType: 'application/json' });
    return packSize + Buffer.byteLength(body);
  }

  async getPackStream(manifest: SnapshotManifest): Promise<Readable> {
    return this.getStream(this.packKey(manifest));
  }

  /** `size` bytes of an object from `offset` (one range GET: a single body out of a snapshot's pack). */
  async getRange(key: string, offset: number, size: number): Promise<Buffer> {
    if (size === 0) return Buffer.alloc(0);
    const out = await this.s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: key, Range: `bytes=${offset}-${offset + size - 1}` }));
    return Buffer.from(await out.Body!.transformToByteArray());
  }

  /** The key of a snapshot's pack. */
  packKey(manifest: Pick<SnapshotManifest, 'version' | 'nonce'>): string {
    return this.key(`snapshots/${pad(manifest.version)}.${manifest.nonce}.pack`);
  }

  async exists(key: string): Promise<boolean> {
    try {
      await this.s3.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  async getStream(key: string): Promise<Readable> {
    const out = await this.s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
    return out.Body as Readable;
  }

  /** An object's body with its size (what an archive import measures the expansion against). */
  async getSizedStream(key: string): Promise<{ stream: Readable; size: number }> {
    const out = await this.s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
    return { stream: out.Body as Readable, size: out.ContentLength ?? 0 };
  }

  private async getText(key: string): Promise<string> {
    const out = await this.s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
    return out.Body!.transformToString('utf8');
  }

  /**
   * A stream body is piped into the request by the SDK, which does not listen for the stream's
   * errors: a file that cannot be read would be an unhandled 'error' event (the end of the
   * process). Here its error aborts the request and becomes this call's error instead.
   */
  async put(key: string, body: string | Uint8Array | Readable, opts: { create?: boolean; contentLength?: number; contentType?: string } = {}): Promise<void> {
    const abort = new AbortController();
    let bodyError: unknown;
    const onBodyError = (err: unknown) => {
      bodyError ??= err;
      abort.abort();
    };
    if (body instanceof Readable) body.on('error', onBodyError);
    try {
      await this.s3.send(
        new PutObjectCommand({
          Bucket: this.bucket,
          Key: key,
          Body: body,
          ...(opts.contentLength !== undefined ? { ContentLength: opts.contentLength } : {}),
          ...(opts.contentType ? { ContentType: opts.contentType } : {}),
          ...(opts.create ? { IfNoneMatch: '*' } : {}),
        }),
        { abortSignal: abort.signal },
      );
    } catch (err) {
      throw bodyError ?? err;
    } finally {
      // A body the request never finished reading would keep its file open.
      if (body instanceof Readable && !body.destroyed) body.destroy();
    }
  }
}

/** The HTTP status of an error S3 answered with; undefined for anything else (a broken connection, a bug). */
export function httpStatus(err: unknown): number | undefined {
  return err instanceof S3ServiceException ? err.$metadata.httpStatusCode : undefined;
}

/** The object is not there: S3's NoSuchKey, or a bare 404 (a HEAD, or an error without a body). */
export function isNotFound(err: unknown): boolean {
  return err instanceof NoSuchKey || httpStatus(err) === 404;
}

/** S3 answers a failed `If-None-Match`/`If-Match` with 412 PreconditionFailed, whatever the message. */
export function isPreconditionFailed(err: unknown): boolean {
  return httpStatus(err) === 412;
}
