/**
 * The child side of the S3 stand-in as the local stack runs it (see s3-server-process.ts): the
 * same server as startS3Server, in its own process, as S3 is its own service in AWS.
 */
import { serveFromChild } from './service-child.ts';
import { startS3Server } from './s3-server.ts';

serveFromChild((opts: { dir: string; buckets: string[]; port?: number }) => startS3Server(opts));
