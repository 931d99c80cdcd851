import { workspacePrefix } from './workspace-prefix.ts';

/**
 * The IAM session policy for one runner invocation: exactly what RemoteWorkspace needs on one
 * workspace's prefix and nothing else. The API function passes it to STS AssumeRole (with a role
 * whose own policy allows the same actions bucket-wide); the effective permissions are the
 * intersection, so the credentials a runner receives reach only this workspace.
 *
 * GetObject also covers HeadObject; PutObject covers conditional (If-None-Match) writes;
 * ListBucket, limited by prefix, lets a cold start find the newest snapshot; DeleteObject only
 * on staged uploads, which the API removes once they are imported (a deleted session's workspace
 * is removed with the session-purge role's credentials instead). PutObjectTagging lets
 * staged uploads, stop markers and egress mailbox requests carry the short-lived tag the
 * lifecycle rule expires them by.
 */
export function workspaceSessionPolicy(opts: { bucket: string; workspaceId: string; partition?: string }) {
  if (!/^[A-Za-z0-9_-]{1,128}$/.test(opts.workspaceId)) throw new Error(`Invalid workspace id "${opts.workspaceId}"`);
  const bucketArn = `arn:${opts.partition ?? 'aws'}:s3:::${opts.bucket}`;
  const prefix = workspacePrefix(opts.workspaceId);
  return {
    Version: '2012-10-17',
    Statement: [
      { Sid: 'WorkspaceObjects', Effect: 'Allow', Action: ['s3:GetObject', 's3:PutObject'], Resource: [`${bucketArn}/${prefix}*`] },
      { Sid: 'StagedUploads', Effect: 'Allow', Action: ['s3:DeleteObject'], Resource: [`${bucketArn}/${prefix}uploads/*`] },
      {
        Sid: 'ShortLivedTags',
        Effect: 'Allow',
        Action: ['s3:PutObjectTagging'],
        Resource: [`${bucketArn}/${prefix}uploads/*`, `${bucketArn}/${prefix}stops/*`, `${bucketArn}/${prefix}egress/*`],
      },
      {
        Sid: 'WorkspaceListing',
        Effect: 'Allow',
        Action: ['s3:ListBucket'],
        Resource: [bucketArn],
        Condition: { StringLike: { 's3:prefix': [`${prefix}*`] } },
      },
    ],
  } as const;
}
