import { beforeAll, describe, expect, it } from 'vitest';
import { iamRequestsOf, LOCAL_ACCOUNT } from '../../local/aws-call-iam.ts';
import type { RecordedCall } from '../../local/aws-call-log.ts';
import { localSessionToken, readLocalSessionToken } from '../../local/local-sts.ts';
import { LOCAL_BUCKET } from '../../local/stack.ts';
import { purgeSessionPolicy } from '../../functions/runner-client/purge-credentials.ts';
import { sessionPolicyFor } from '../../functions/runner-client/sts-credentials.ts';
import { checkRecordedCalls, failuresOf } from '../support/iam-coverage/global-setup.ts';
import type { CoverageReport } from '../support/iam-coverage/check-calls.ts';

const bucket = `arn:aws:s3:::${LOCAL_BUCKET}`;
const table = (name: string) => `arn:aws:dynamodb:us-east-1:${LOCAL_ACCOUNT}:table/stratus-${name}`;
const call = (
  fn: string | null,
  action: string,
  resource: string,
  context: Record<string, string> = {},
  assumedRole?: RecordedCall['assumedRole'],
): RecordedCall => ({
  function: fn,
  action,
  resource,
  context,
  ...(assumedRole ? { assumedRole } : {}),
});
const workspaceRole = (id: string) => ({ role: 'stratus-workspace-access', sessionPolicy: sessionPolicyFor(LOCAL_BUCKET, id) });
const purgeRole = (sessionId: string, workspaceId: string) => ({
  role: 'stratus-session-purge',
  sessionPolicy: purgeSessionPolicy({ bucket: LOCAL_BUCKET, sessionId, workspaceId }),
});

/** The IAM coverage check (test/support/iam-coverage/) judging calls as the synthesized roles would. */
describe('the IAM coverage check', () => {
  let report: CoverageReport;
  const deniedActions = () =>
    report.denied.map((d) => `${d.call.role.replace(/[A-F0-9]{8}$/, '')} ${d.call.action} ${d.call.resource.replace(/^.*:::[^/]+/, 'bucket')}`);

  beforeAll(async () => {
    report = await checkRecordedCalls([
      // What the purge did before it had a role of its own: list and delete under tool-results/ as the API function.
      call('stratus-api', 's3:ListBucket', bucket, { 's3:prefix': 'tool-results/ses_1/' }),
      call('stratus-api', 's3:DeleteObject', `${bucket}/tool-results/ses_1/toolu_1.txt`),
      call('stratus-api', 's3:GetObject', `${bucket}/tool-results/ses_1/toolu_1.txt`),
      call('stratus-api', 'dynamodb:Query', `${table('sessions')}/index/byTenant`),
      call('stratus-cron', 'lambda:InvokeFunction', `arn:aws:lambda:us-east-1:${LOCAL_ACCOUNT}:function:stratus-tenant-runner`),
      call('stratus-api', 'sts:AssumeRole', `arn:aws:iam::${LOCAL_ACCOUNT}:role/stratus-session-purge`),
      call('stratus-cron', 'sts:AssumeRole', `arn:aws:iam::${LOCAL_ACCOUNT}:role/stratus-session-purge`),
      // Runner credentials reach their own workspace only: the session policy, not the role, refuses the other one.
      call('stratus-tenant-runner', 's3:GetObject', `${bucket}/workspaces/ws_a/manifest.json`, {}, workspaceRole('ws_a')),
      call('stratus-tenant-runner', 's3:GetObject', `${bucket}/workspaces/ws_b/manifest.json`, {}, workspaceRole('ws_a')),
      call('stratus-tenant-runner', 's3:ListBucket', bucket, { 's3:prefix': 'workspaces/ws_a/' }, workspaceRole('ws_a')),
      call('stratus-api', 's3:DeleteObjectVersion', `${bucket}/spill/ses_1/messages/x.json`, {}, purgeRole('ses_1', 'ws_a')),
      call('stratus-api', 's3:ListBucketVersions', bucket, { 's3:prefix': 'workspaces/ws_a/' }, purgeRole('ses_1', 'ws_a')),
      call('stratus-api', 's3:DeleteObjectVersion', `${bucket}/spill/ses_2/messages/x.json`, {}, purgeRole('ses_1', 'ws_a')),
      call('stratus-nowhere', 's3:GetObject', `${bucket}/tool-results/x`),
      { function: 'stratus-api', unmapped: 'S3Client.PutBucketPolicyCommand' },
      call(null, 's3:ListBucket', bucket),
    ]);
  });

  it('fails each call the role would refuse, naming the policy that refused it and the statement missing', () => {
    expect(deniedActions()).toEqual([
      'ApiRole s3:ListBucket bucket',
      'ApiRole s3:DeleteObject bucket/tool-results/ses_1/toolu_1.txt',
      'CronRole sts:AssumeRole arn:aws:iam::123456789012:role/stratus-prod-session-purge',
      'stratus-prod-workspace-access s3:GetObject bucket/workspaces/ws_b/manifest.json',
      'stratus-prod-session-purge s3:DeleteObjectVersion bucket/spill/ses_2/messages/x.json',
    ]);
    const [list] = report.denied;
    expect(list!.reason).toContain('ImplicitlyDenied by identity policy');
    expect(list!.reason).toContain('missing: { "Effect": "Allow", "Action": "s3:ListBucket", "Resource": "arn:aws:s3:::');
    expect(list!.reason).toContain('"s3:prefix":"tool-results/ses_1/"');
    expect(report.denied.find((d) => d.call.resource.includes('ws_b'))!.reason).toContain('session policy');
  });

  it('counts what it judged, and fails unmapped SDK calls and functions the template lacks instead of passing them', () => {
    expect(report.checked).toHaveLength(13);
    expect(report.distinctRoleActionResource).toBe(13);
    expect(report.outsideFunctions).toBe(1);
    expect(report.unknownPrincipals).toEqual(['function stratus-nowhere (expected stratus-prod-nowhere in the template)']);
    expect(failuresOf(report).filter((f) => f.includes('unmapped SDK call stratus-api: S3Client.PutBucketPolicyCommand'))).toHaveLength(1);
  });
});

describe('what the recorder maps an SDK call to', () => {
  const where = { region: 'us-east-1', account: LOCAL_ACCOUNT };
  it('gives each object of a DeleteObjects, a copy source, tags and versions their own IAM request', () => {
    expect(
      iamRequestsOf('S3Client', 'DeleteObjectsCommand', { Bucket: 'b', Delete: { Objects: [{ Key: 'a' }, { Key: 'b', VersionId: 'v1' }] } }, where),
    ).toEqual({
      requests: [
        { action: 's3:DeleteObject', resource: 'arn:aws:s3:::b/a', context: {} },
        { action: 's3:DeleteObjectVersion', resource: 'arn:aws:s3:::b/b', context: {} },
      ],
    });
    expect(iamRequestsOf('S3Client', 'CopyObjectCommand', { Bucket: 'b', Key: 'to', CopySource: 'b/from%20x' }, where)).toMatchObject({
      requests: [
        { action: 's3:PutObject', resource: 'arn:aws:s3:::b/to' },
        { action: 's3:GetObject', resource: 'arn:aws:s3:::b/from x' },
      ],
    });
    expect(iamRequestsOf('S3Client', 'PutObjectCommand', { Bucket: 'b', Key: 'k', Tagging: 'a=b' }, where)).toMatchObject({
      requests: [{ action: 's3:PutObject' }, { action: 's3:PutObjectTagging' }],
    });
    expect(iamRequestsOf('S3Client', 'ListObjectVersionsCommand', { Bucket: 'b', Prefix: 'p/' }, where)).toEqual({
      requests: [{ action: 's3:ListBucketVersions', resource: 'arn:aws:s3:::b', context: { 's3:prefix': 'p/' } }],
    });
    expect(iamRequestsOf('DynamoDBDocumentClient', 'QueryCommand', { TableName: 't', IndexName: 'byTenant' }, where)).toEqual({
      requests: [{ action: 'dynamodb:Query', resource: `arn:aws:dynamodb:us-east-1:${LOCAL_ACCOUNT}:table/t/index/byTenant`, context: {} }],
    });
    expect(iamRequestsOf('S3Client', 'PutBucketPolicyCommand', { Bucket: 'b' }, where)).toEqual({ unmapped: 'S3Client.PutBucketPolicyCommand' });
  });

  it('reads back the role and session policy a local session token carries, and nothing from another token', () => {
    const session = workspaceRole('ws_a');
    expect(readLocalSessionToken(localSessionToken(session))).toEqual(session);
    expect(readLocalSessionToken('FwoGZXIvYXdzEJr//////////')).toBeUndefined();
  });
});
