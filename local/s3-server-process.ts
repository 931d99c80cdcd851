import { fileURLToPath } from 'node:url';
import type { LocalCredentials } from './local-credentials.ts';
import { startServiceProcess, type EmbeddedServer } from './service-process.ts';
import type { S3NotificationRule } from './s3-notifications.ts';

const ENTRY = fileURLToPath(new URL('./s3-process.ts', import.meta.url));

/**
 * The S3 stand-in (startS3Server: s3rver behind the conditional-write front) in a child process,
 * as the local stack runs it: the runner's uploads and downloads and the API's object reads are
 * served beside the API process, not on its event loop. Tests and benchmarks that count
 * requests (`traffic()`) call startS3Server in their own process. The child needs the legacy
 * OpenSSL provider for s3rver's paginated listings (docs/local-stack.md), so it gets the flag
 * whatever NODE_OPTIONS says.
 */
export function startS3ServerProcess(opts: {
  dir: string;
  buckets: string[];
  versionedBuckets?: string[];
  port?: number;
  credentials?: LocalCredentials;
  notifications?: S3NotificationRule[];
}): Promise<EmbeddedServer> {
  return startServiceProcess({ name: 'S3 stand-in', entry: ENTRY, args: opts, execArgv: ['--openssl-legacy-provider'] });
}
