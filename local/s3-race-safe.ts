import type { VersionStore } from './s3-versions.ts';

/** Times a listing that raced a deletion is read again before its error is passed on. */
const LIST_ATTEMPTS = 5;

const raced = (err: unknown) => ['ENOENT', 'ENOTEMPTY'].includes((err as { code?: string } | undefined)?.code ?? '');

/**
 * s3rver's file store, made to answer concurrent deletions as S3 does. Its deleteObject unlinks
 * the object's files (tolerating missing ones) and then removes the folders left empty, which
 * throws ENOENT/ENOTEMPTY when another deletion in the same folder got there first; its listing
 * walks folders that such a deletion may remove under it. S3 answers both without error (a
 * deleted version is simply gone, a listing sees a consistent bucket), so here a deletion whose
 * files are gone succeeds and a listing that raced one is read again. Found by concurrent purges
 * of one session (test/integration/async-crash-redrive.test.ts).
 */
export function raceSafe(store: VersionStore): VersionStore {
  return {
    existsObject: (bucket, key) => store.existsObject(bucket, key),
    getObject: (bucket, key) => store.getObject(bucket, key),
    getMetadata: (bucket, key) => store.getMetadata(bucket, key),
    putObject: (object) => store.putObject(object),
    putBucket: (bucket) => store.putBucket(bucket),
    async deleteObject(bucket, key) {
      await store.deleteObject(bucket, key).catch((err: unknown) => {
        if (!raced(err)) throw err;
      });
    },
    async listObjects(bucket, options) {
      for (let attempt = 1; ; attempt++) {
        try {
          return await store.listObjects(bucket, options);
        } catch (err) {
          if (!raced(err) || attempt >= LIST_ATTEMPTS) throw err;
        }
      }
    },
  };
}
