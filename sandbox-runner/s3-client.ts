import { S3Client } from '@aws-sdk/client-s3';
import type { StorageCredentials } from './protocol.ts';
import { cachedByCredentials, s3ClientConfig, type S3ClientFactoryOptions } from './common/s3-client-config.ts';

/**
 * S3 clients for the credentials each request carries (cached by access key, so a warm
 * container reuses connections).
 */
export function createS3ClientFactory(opts: S3ClientFactoryOptions): (credentials: StorageCredentials) => S3Client {
  return cachedByCredentials((credentials) => new S3Client(s3ClientConfig(opts, credentials)));
}
