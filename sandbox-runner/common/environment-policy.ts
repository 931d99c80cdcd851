/**
 * The IAM session policy for credentials that reach cached environment layers
 * (environment-layer-key.ts), minted like a workspace's from the workspace-access role
 * (functions/runner-client/sts-credentials.ts):
 * - `read`: GetObject on one layer (every runner call of a session with an environment; a cold
 *   runner restores the layer with it);
 * - `write`: GetObject and PutObject on one layer (only the runner op that saves it, after the
 *   set-up steps succeeded);
 * - `delete`: ListBucket and DeleteObject under one repository's folder (the API side dropping
 *   stale or all layers; never handed to the runner).
 */
export type EnvironmentAccess = 'read' | 'write' | 'delete';

export function environmentSessionPolicy(opts: { bucket: string; target: string; access: EnvironmentAccess; partition?: string }) {
  if (/[*?]/.test(opts.target)) throw new Error('An environment grant names one key or folder, without wildcards.');
  const bucketArn = `arn:${opts.partition ?? 'aws'}:s3:::${opts.bucket}`;
  if (opts.access === 'delete') {
    return {
      Version: '2012-10-17',
      Statement: [
        {
          Sid: 'LayerListing',
          Effect: 'Allow',
          Action: ['s3:ListBucket', 's3:ListBucketVersions'],
          Resource: [bucketArn],
          Condition: { StringLike: { 's3:prefix': [`${opts.target}*`] } },
        },
        { Sid: 'LayerDeletion', Effect: 'Allow', Action: ['s3:DeleteObject', 's3:DeleteObjectVersion'], Resource: [`${bucketArn}/${opts.target}*`] },
      ],
    } as const;
  }
  const actions = opts.access === 'write' ? ['s3:GetObject', 's3:PutObject'] : ['s3:GetObject'];
  return { Version: '2012-10-17', Statement: [{ Sid: 'LayerObject', Effect: 'Allow', Action: actions, Resource: [`${bucketArn}/${opts.target}`] }] } as const;
}
