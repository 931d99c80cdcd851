import { CreateBucketCommand, HeadBucketCommand, PutBucketVersioningCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import type { LocalCredentials } from './local-credentials.ts';

/**
 * Creates the bucket at an existing S3 endpoint if it is missing, with versioning enabled as the
 * deployed bucket has it (infra/constructs/data-stores.ts), so the purge's version deletion
 * meets what it meets in AWS. A bucket that exists is left as it is. An S3 that cannot version
 * (s3rver answers NotImplemented) keeps the bucket unversioned: the caller is told, to warn.
 */
export async function ensureBucket(opts: {
  endpoint: string;
  region: string;
  bucket: string;
  credentials: LocalCredentials;
}): Promise<'existed' | 'created' | 'created unversioned'> {
  const s3 = new S3Client({ region: opts.region, endpoint: opts.endpoint, credentials: opts.credentials, forcePathStyle: true });
  try {
    if (await bucketExists(s3, opts.bucket)) return 'existed';
    await s3.send(new CreateBucketCommand({ Bucket: opts.bucket }));
    await s3.send(new PutBucketVersioningCommand({ Bucket: opts.bucket, VersioningConfiguration: { Status: 'Enabled' } }));
    return 'created';
  } catch (err) {
    if (err instanceof S3ServiceException && err.name === 'NotImplemented') return 'created unversioned';
    throw err;
  } finally {
    s3.destroy();
  }
}

async function bucketExists(s3: S3Client, bucket: string): Promise<boolean> {
  try {
    await s3.send(new HeadBucketCommand({ Bucket: bucket }));
    return true;
  } catch (err) {
    if (err instanceof S3ServiceException && err.$metadata.httpStatusCode === 404) return false;
    throw err;
  }
}
