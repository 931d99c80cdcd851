import type { S3Client } from '@aws-sdk/client-s3';
import type { LazyClient } from '../shared/lazy-client.ts';

/**
 * Harness-side blobs in S3: persisted tool results and message payloads too large for a
 * DynamoDB item. Keys are derived from ids that never repeat, so every write is create-only:
 * a replayed write finds the object already there and leaves it alone.
 */
export class BlobStore {
  constructor(
    private readonly s3: LazyClient<S3Client>,
    private readonly bucket: string,
  ) {}

  /**
   * Writes the object unless it exists. Returns false when it was already there (a replay): S3
   * answers a failed `If-None-Match` with 412 PreconditionFailed, whatever the message.
   */
  async putIfAbsent(key: string, body: string, contentType = 'text/plain; charset=utf-8'): Promise<boolean> {
    const { PutObjectCommand, S3ServiceException } = await import('@aws-sdk/client-s3');
    try {
      await (await this.s3()).send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: body, ContentType: contentType, IfNoneMatch: '*' }));
      return true;
    } catch (err) {
      if (err instanceof S3ServiceException && err.$metadata.httpStatusCode === 412) return false;
      throw err;
    }
  }

  /** The object's text, or undefined when there is none. */
  async get(key: string): Promise<string | undefined> {
    const { GetObjectCommand, NoSuchKey, S3ServiceException } = await import('@aws-sdk/client-s3');
    try {
      const out = await (await this.s3()).send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      return (await out.Body?.transformToString('utf8')) ?? '';
    } catch (err) {
      if (err instanceof NoSuchKey || (err instanceof S3ServiceException && err.$metadata.httpStatusCode === 404)) return undefined;
      throw err;
    }
  }
}
