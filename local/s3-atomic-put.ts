import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** What of s3rver's file store this uses (its FilesystemStore). */
interface FileStore {
  getResourcePath(bucket: string, key: string, resource: string): string;
  putMetadata(bucket: string, key: string, metadata: Record<string, string>, md5: string): Promise<void>;
  putObject(object: { bucket: string; key: string; content: Readable | Buffer; metadata: Record<string, string> }): Promise<{ size: number; md5: string }>;
}

/**
 * Makes s3rver's PutObject atomic, as S3's is: a reader sees the whole new object or none of it.
 * s3rver streams the body straight into the object's file and does not even wait for that write
 * to finish, so a GET racing a PUT (the egress mailbox polls for an answer object the forwarder is
 * writing) could read a part of it. Here the body goes to a file beside it, fully written, the
 * metadata is stored, and the file is renamed into place last: one rename, which is atomic.
 */
export function atomicPuts(store: FileStore): void {
  store.putObject = async (object) => {
    const objectPath = store.getResourcePath(object.bucket, object.key, 'object');
    await mkdir(path.dirname(objectPath), { recursive: true });
    const partial = `${objectPath}.partial-${randomBytes(6).toString('hex')}`;
    const md5 = createHash('md5');
    let size = 0;
    const count = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        md5.update(chunk);
        size += chunk.length;
        done(null, chunk);
      },
    });
    const body = Buffer.isBuffer(object.content) ? Readable.from([object.content]) : object.content;
    try {
      await pipeline(body, count, createWriteStream(partial));
      const digest = md5.digest('hex');
      await store.putMetadata(object.bucket, object.key, object.metadata, digest);
      await rename(partial, objectPath);
      return { size, md5: digest };
    } catch (err) {
      await rm(partial, { force: true });
      throw err;
    }
  };
}
