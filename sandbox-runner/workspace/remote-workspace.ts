import { GetObjectCommand, HeadObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { Manifest } from './manifest.ts';

/** Thrown when a manifest version already exists: someone else published from the same base. */
export class WorkspaceConflictError extends Error {
  constructor(id: string, version: number) {
    super(`Workspace ${id} already has version ${version}: it changed concurrently. Reload and retry.`);
    this.name = 'WorkspaceConflictError';
  }
}

/**
 * The S3 side of one workspace:
 *   workspaces/{id}/manifests/{version, 10 digits}.json   immutable, create-only
 *   workspaces/{id}/blobs/{sha256}                        content-addressed file bodies
 */
export class RemoteWorkspace {
  constructor(
    private readonly s3: S3Client,
    private readonly bucket: string,
    readonly id: string,
  ) {}

  private manifestKey(version: number) {
    return `workspaces/${this.id}/manifests/${String(version).padStart(10, '0')}.json`;
  }

  private blobKey(sha256: string) {
    return `workspaces/${this.id}/blobs/${sha256}`;
  }

  async getManifest(version: number): Promise<Manifest> {
    const out = await this.s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.manifestKey(version) }));
    return JSON.parse(await out.Body!.transformToString('utf8')) as Manifest;
  }

  /** Publishes a manifest; a version that already exists means a concurrent writer won. */
  async putManifest(manifest: Manifest): Promise<number> {
    const body = JSON.stringify(manifest);
    try {
      await this.s3.send(
        new PutObjectCommand({
          Bucket: this.bucket,
          Key: this.manifestKey(manifest.version),
          Body: body,
          ContentType: 'application/json',
          IfNoneMatch: '*',
        }),
      );
    } catch (err) {
      if (isPreconditionFailed(err)) throw new WorkspaceConflictError(this.id, manifest.version);
      throw err;
    }
    return Buffer.byteLength(body);
  }

  async getBlob(sha256: string): Promise<Uint8Array> {
    const out = await this.s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.blobKey(sha256) }));
    return out.Body!.transformToByteArray();
  }

  /** Uploads a blob unless it is already there; returns the bytes sent. */
  async putBlob(sha256: string, body: Uint8Array): Promise<number> {
    if (await this.hasBlob(sha256)) return 0;
    try {
      await this.s3.send(new PutObjectCommand({ Bucket: this.bucket, Key: this.blobKey(sha256), Body: body, IfNoneMatch: '*' }));
    } catch (err) {
      // Same content, same key: another writer uploading it first is fine.
      if (!isPreconditionFailed(err)) throw err;
      return 0;
    }
    return body.byteLength;
  }

  private async hasBlob(sha256: string): Promise<boolean> {
    try {
      await this.s3.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.blobKey(sha256) }));
      return true;
    } catch (err) {
      if (httpStatus(err) === 404) return false;
      throw err;
    }
  }
}

function httpStatus(err: unknown): number | undefined {
  return (err as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
}

export function isPreconditionFailed(err: unknown): boolean {
  return httpStatus(err) === 412 || (err as { name?: string })?.name === 'PreconditionFailed';
}
