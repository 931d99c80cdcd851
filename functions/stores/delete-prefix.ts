import type { S3Client } from '@aws-sdk/client-s3';

/** Deletes at once (single-object deletes: they need no checksum header, which some S3 stand-ins refuse). */
const PARALLEL_DELETES = 8;

/** Deletes every object under a prefix (but `except`), a listing page at a time. Returns how many were deleted. */
export async function deletePrefix(s3: S3Client, bucket: string, prefix: string, except?: string): Promise<number> {
  const { DeleteObjectCommand, ListObjectsV2Command } = await import('@aws-sdk/client-s3');
  let deleted = 0;
  let token: string | undefined;
  do {
    const page = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }));
    const keys = (page.Contents ?? []).map((o) => o.Key!).filter((key) => key && key !== except);
    for (let i = 0; i < keys.length; i += PARALLEL_DELETES) {
      await Promise.all(keys.slice(i, i + PARALLEL_DELETES).map((Key) => s3.send(new DeleteObjectCommand({ Bucket: bucket, Key }))));
    }
    deleted += keys.length;
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return deleted;
}
