import type { S3Client } from '@aws-sdk/client-s3';

/** Deletes at once (single-object deletes: they need no checksum header, which some S3 stand-ins refuse). */
const PARALLEL_DELETES = 8;

/**
 * Deletes every object under a prefix for good: each version and each delete marker, by version
 * id, a listing page at a time. The bucket is versioned, so a plain delete would only hide the
 * objects behind delete markers and keep their data for the noncurrent-version lifetime. Returns
 * how many versions and markers were deleted. (Unversioned objects list as version `null`.) A key
 * equal to `except` keeps every version.
 */
export async function deletePrefix(s3: S3Client, bucket: string, prefix: string, except?: string): Promise<number> {
  const { DeleteObjectCommand, ListObjectVersionsCommand } = await import('@aws-sdk/client-s3');
  let deleted = 0;
  let keyMarker: string | undefined;
  let versionIdMarker: string | undefined;
  do {
    const page = await s3.send(new ListObjectVersionsCommand({ Bucket: bucket, Prefix: prefix, KeyMarker: keyMarker, VersionIdMarker: versionIdMarker }));
    const versions = [...(page.Versions ?? []), ...(page.DeleteMarkers ?? [])]
      .filter((v) => v.Key && v.Key !== except)
      .map((v) => ({ Key: v.Key!, VersionId: v.VersionId ?? 'null' }));
    for (let i = 0; i < versions.length; i += PARALLEL_DELETES) {
      await Promise.all(versions.slice(i, i + PARALLEL_DELETES).map((v) => s3.send(new DeleteObjectCommand({ Bucket: bucket, ...v }))));
    }
    deleted += versions.length;
    ({ NextKeyMarker: keyMarker, NextVersionIdMarker: versionIdMarker } = page.IsTruncated
      ? page
      : { NextKeyMarker: undefined, NextVersionIdMarker: undefined });
  } while (keyMarker);
  return deleted;
}
