import { S3Client } from '@aws-sdk/client-s3';
import type { StorageCredentials } from './protocol.ts';

/**
 * S3 clients for the credentials each request carries (cached by access key, so a warm
 * container reuses connections). Checksums only when required: safe for real S3, and needed by
 * the local S3 server, which would otherwise store aws-chunked framing (docs/local-stack.md).
 */
export function createS3ClientFactory(opts: { region: string; endpoint?: string }): (credentials: StorageCredentials) => S3Client {
  const cache = new Map<string, S3Client>();
  return (credentials) => {
    const key = `${credentials.accessKeyId}:${credentials.sessionToken ?? ''}`;
    let client = cache.get(key);
    if (!client) {
      if (cache.size >= 16) cache.clear();
      client = new S3Client({
        region: opts.region,
        endpoint: opts.endpoint,
        forcePathStyle: opts.endpoint !== undefined,
        credentials: {
          accessKeyId: credentials.accessKeyId,
          secretAccessKey: credentials.secretAccessKey,
          sessionToken: credentials.sessionToken,
        },
        requestChecksumCalculation: 'WHEN_REQUIRED',
        responseChecksumValidation: 'WHEN_REQUIRED',
      });
      cache.set(key, client);
    }
    return client;
  };
}
