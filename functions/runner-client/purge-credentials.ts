import type { STSClient } from '@aws-sdk/client-sts';
import type { StorageCredentials } from '../../sandbox-runner/protocol.ts';
import { workspacePrefix } from '../../sandbox-runner/common/workspace-prefix.ts';
import { BUCKET_LAYOUT } from '../stores/bucket-layout.ts';
import { SystemError } from '../shared/errors.ts';
import type { LazyClient } from '../shared/lazy-client.ts';
import { assertWorkspaceId, assumeRoleWithPolicy } from './sts-credentials.ts';

/**
 * Mints the credentials the purge of one deleted session removes its S3 objects with, every
 * version of them included: only that path holds list and delete rights on the bucket (the
 * session-purge role, infra/constructs/session-purge-role.ts); the functions' own roles may only
 * read and write.
 */
export interface PurgeCredentialSource {
  forSession(session: { sessionId: string; workspaceId: string }): Promise<StorageCredentials>;
}

/** The prefixes a session's objects live under: its persisted results, its spilled payloads, its workspace. */
export function sessionPrefixes(session: { sessionId: string; workspaceId: string }): string[] {
  assertWorkspaceId(session.workspaceId);
  // Session ids go into the policy too: a `*` or `?` would widen it to other sessions.
  if (!/^[A-Za-z0-9_-]{1,128}$/.test(session.sessionId)) {
    throw new SystemError(`Refusing to mint purge credentials for session id "${session.sessionId}": expected [A-Za-z0-9_-]{1,128}.`, 'bad_session_id');
  }
  return [`${BUCKET_LAYOUT.toolResults}${session.sessionId}/`, `${BUCKET_LAYOUT.spill}${session.sessionId}/`, workspacePrefix(session.workspaceId)];
}

/**
 * The inline session policy for purging one session: list (objects and versions) and delete
 * (objects and versions) under that session's prefixes, nothing else. The session-purge role's
 * own policy allows the same on the three prefix families bucket-wide.
 */
export function purgeSessionPolicy(opts: { bucket: string; sessionId: string; workspaceId: string; partition?: string }) {
  const bucketArn = `arn:${opts.partition ?? 'aws'}:s3:::${opts.bucket}`;
  const prefixes = sessionPrefixes(opts);
  return {
    Version: '2012-10-17',
    Statement: [
      {
        Sid: 'SessionListing',
        Effect: 'Allow',
        Action: ['s3:ListBucket', 's3:ListBucketVersions'],
        Resource: [bucketArn],
        Condition: { StringLike: { 's3:prefix': prefixes.map((p) => `${p}*`) } },
      },
      { Sid: 'SessionDeletion', Effect: 'Allow', Action: ['s3:DeleteObject', 's3:DeleteObjectVersion'], Resource: prefixes.map((p) => `${bucketArn}/${p}*`) },
    ],
  } as const;
}

/** Purge credentials from STS: the session-purge role, narrowed to one session by purgeSessionPolicy. */
export function createStsPurgeCredentialSource(opts: {
  sts: LazyClient<STSClient>;
  roleArn: string;
  bucket: string;
  partition?: string;
}): PurgeCredentialSource {
  return {
    forSession: (session) =>
      assumeRoleWithPolicy(opts.sts, {
        roleArn: opts.roleArn,
        sessionName: `purge-${session.sessionId}`,
        policy: purgeSessionPolicy({ bucket: opts.bucket, partition: opts.partition, ...session }),
      }),
  };
}
