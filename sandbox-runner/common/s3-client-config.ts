import type { S3Client, S3ClientConfig } from '@aws-sdk/client-s3';

/** The keys an S3 client signs with: the wire protocol's storage credentials have this shape. */
export interface StorageCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export interface S3ClientFactoryOptions {
  region: string;
  endpoint?: string;
}

/**
 * Checksums only when required: safe for real S3, and needed by the local S3 server, which
 * would otherwise store aws-chunked framing (docs/local-stack.md).
 */
export function s3ClientConfig(opts: S3ClientFactoryOptions, credentials: StorageCredentials): S3ClientConfig {
  return {
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
  };
}

/**
 * One client per access key (at most 16 kept): a warm container reuses its connections. Apart
 * from s3-client.ts (which imports the S3 package), so the API can build its clients after a
 * dynamic import of the package (functions/handlers/create-deps.ts).
 */
export function cachedByCredentials(build: (credentials: StorageCredentials) => S3Client): (credentials: StorageCredentials) => S3Client {
  const cache = new Map<string, S3Client>();
  return (credentials) => {
    const key = `${credentials.accessKeyId}:${credentials.sessionToken ?? ''}`;
    let client = cache.get(key);
    if (!client) {
      if (cache.size >= 16) cache.clear();
      client = build(credentials);
      cache.set(key, client);
    }
    return client;
  };
}
