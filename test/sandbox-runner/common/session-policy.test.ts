import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workspaceSessionPolicy } from '../../../sandbox-runner/common/session-policy.ts';
import { BUCKET, expectOk, startRunnerFixture, type RunnerFixture } from '../../support/runner-fixture.ts';

/** IAM's wildcard match for a resource pattern (only `*` is used in our policies). */
const matches = (pattern: string, arn: string) =>
  new RegExp(
    `^${pattern
      .split('*')
      .map((p) => p.replace(/[.+?^${}()|[\]\\/]/g, '\\$&'))
      .join('.*')}$`,
  ).test(arn);

describe('the session policy for runner credentials', () => {
  let fx: RunnerFixture;
  beforeAll(async () => {
    fx = await startRunnerFixture();
  });
  afterAll(async () => {
    await fx?.stop();
  });

  it('allows exactly one workspace prefix', () => {
    expect(workspaceSessionPolicy({ bucket: 'stratus-ws', workspaceId: 'ws_1' })).toEqual({
      Version: '2012-10-17',
      Statement: [
        { Sid: 'WorkspaceObjects', Effect: 'Allow', Action: ['s3:GetObject', 's3:PutObject'], Resource: ['arn:aws:s3:::stratus-ws/workspaces/ws_1/*'] },
        { Sid: 'StagedUploads', Effect: 'Allow', Action: ['s3:DeleteObject'], Resource: ['arn:aws:s3:::stratus-ws/workspaces/ws_1/uploads/*'] },
        {
          Sid: 'ShortLivedTags',
          Effect: 'Allow',
          Action: ['s3:PutObjectTagging'],
          Resource: [
            'arn:aws:s3:::stratus-ws/workspaces/ws_1/uploads/*',
            'arn:aws:s3:::stratus-ws/workspaces/ws_1/stops/*',
            'arn:aws:s3:::stratus-ws/workspaces/ws_1/egress/*',
          ],
        },
        {
          Sid: 'WorkspaceListing',
          Effect: 'Allow',
          Action: ['s3:ListBucket'],
          Resource: ['arn:aws:s3:::stratus-ws'],
          Condition: { StringLike: { 's3:prefix': ['workspaces/ws_1/*'] } },
        },
      ],
    });
    expect(() => workspaceSessionPolicy({ bucket: 'b', workspaceId: '../other' })).toThrow('Invalid workspace id "../other"');
  });

  it('covers every object the runner writes for a workspace, and no other workspace', async () => {
    const id = fx.newWorkspaceId();
    const other = fx.newWorkspaceId();
    expectOk(await fx.call(id, 0, { type: 'create_workspace', files: { 'a.txt': 'a', 'b/c.txt': 'c' } }));
    // A file too large to ride inside the delta: a blob is among the objects.
    expectOk(await fx.call(id, 1, { type: 'bash', command: 'echo x >> a.txt; head -c 20000 /dev/zero > big.bin; rm b/c.txt', timeoutMs: 10_000 }));
    expectOk(await fx.call(id, 2, { type: 'export_archive' }));
    expectOk(await fx.call(other, 0, { type: 'create_workspace', files: { 'z.txt': 'z' } }));
    const listed = await fx.s3Client.send(new ListObjectsV2Command({ Bucket: BUCKET }));
    const keys = (listed.Contents ?? []).map((o) => o.Key!);
    const policy = workspaceSessionPolicy({ bucket: BUCKET, workspaceId: id });
    const objectPattern = policy.Statement[0].Resource[0];
    const mine = keys.filter((k) => k.startsWith(`workspaces/${id}/`));
    expect(mine.length).toBeGreaterThanOrEqual(6);
    for (const key of keys) expect(matches(objectPattern, `arn:aws:s3:::${BUCKET}/${key}`)).toBe(mine.includes(key));
  });
});
