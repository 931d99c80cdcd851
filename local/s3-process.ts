/**
 * The child side of the S3 stand-in as the local stack runs it (see s3-server-process.ts): the
 * same server as startS3Server, in its own process, as S3 is its own service in AWS.
 */
import { serveFromChild } from './service-child.ts';
import { startS3Server } from './s3-server.ts';

serveFromChild((opts: Parameters<typeof startS3Server>[0]) => startS3Server(opts));
