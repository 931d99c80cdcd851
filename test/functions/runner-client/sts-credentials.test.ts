import { STSClient } from '@aws-sdk/client-sts';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStsWorkspaceCredentialSource, sessionPolicyFor } from '../../../functions/runner-client/sts-credentials.ts';
import { workspaceSessionPolicy } from '../../../sandbox-runner/common/session-policy.ts';
import { environmentLayerKey } from '../../../sandbox-runner/common/environment-layer-key.ts';

const ROLE_ARN = 'arn:aws:iam::123456789012:role/stratus-dev-workspace-access';
const EXPIRATION = Date.parse('2026-11-29T20:00:00Z');

describe('sessionPolicyFor', () => {
  it("is the runner's workspace policy (one prefix), in the partition it is given", () => {
    expect(sessionPolicyFor('stratus-bucket', 'ws_01-A')).toEqual(workspaceSessionPolicy({ bucket: 'stratus-bucket', workspaceId: 'ws_01-A' }));
    expect(sessionPolicyFor('b', 'w', 'aws-cn').Statement[0].Resource).toEqual(['arn:aws-cn:s3:::b/workspaces/w/*']);
  });

  it.each(['*', 'ws*', 'ws?', 'a/b', '..', '', 'x'.repeat(129), 'ws 1'])('refuses the workspace id %j, which would widen or break the policy', (id) => {
    expect(() => sessionPolicyFor('b', id)).toThrow(`Refusing to mint credentials for workspace id "${id}": expected [A-Za-z0-9_-]{1,128}.`);
  });
});

describe('createStsWorkspaceCredentialSource', () => {
  let server: Server;
  let endpoint: string;
  const requests: URLSearchParams[] = [];

  beforeAll(async () => {
    // Speaks the STS query protocol: form-encoded request, XML response.
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const params = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
        requests.push(params);
        const n = requests.length;
        res.writeHead(200, { 'content-type': 'text/xml' });
        res.end(`<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><AssumeRoleResult>
<Credentials><AccessKeyId>ASIAEXAMPLE${n}</AccessKeyId><SecretAccessKey>secret${n}</SecretAccessKey>
<SessionToken>token${n}</SessionToken><Expiration>${new Date(EXPIRATION).toISOString()}</Expiration></Credentials>
<AssumedRoleUser><Arn>${ROLE_ARN}/x</Arn><AssumedRoleId>AROA:x</AssumedRoleId></AssumedRoleUser>
</AssumeRoleResult><ResponseMetadata><RequestId>r${n}</RequestId></ResponseMetadata></AssumeRoleResponse>`);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const source = (now: { t: number }) =>
    createStsWorkspaceCredentialSource({
      sts: async () => new STSClient({ region: 'eu-west-1', endpoint, credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'x' } }),
      roleArn: ROLE_ARN,
      bucket: 'stratus-bucket',
      clock: () => now.t,
    });

  it('assumes the workspace-access role with the workspace session policy and returns the credentials', async () => {
    requests.length = 0;
    const creds = await source({ t: EXPIRATION - 15 * 60_000 }).forWorkspace('ws_1');
    expect(creds).toEqual({
      accessKeyId: 'ASIAEXAMPLE1',
      secretAccessKey: 'secret1',
      sessionToken: 'token1',
      expiration: '2026-11-29T20:00:00.000Z',
    });
    expect(requests).toHaveLength(1);
    const sent = requests[0]!;
    expect(sent.get('Action')).toBe('AssumeRole');
    expect(sent.get('RoleArn')).toBe(ROLE_ARN);
    expect(sent.get('RoleSessionName')).toBe('ws-ws_1');
    expect(sent.get('DurationSeconds')).toBe('900');
    expect(JSON.parse(sent.get('Policy')!)).toEqual(sessionPolicyFor('stratus-bucket', 'ws_1'));
  });

  it('reuses credentials per workspace while they have more than five minutes left', async () => {
    requests.length = 0;
    const now = { t: EXPIRATION - 15 * 60_000 };
    const creds = source(now);
    const first = await creds.forWorkspace('ws_a');
    expect(await creds.forWorkspace('ws_a')).toBe(first);
    await creds.forWorkspace('ws_b');
    expect(requests.map((r) => r.get('RoleSessionName'))).toEqual(['ws-ws_a', 'ws-ws_b']);
    now.t = EXPIRATION - 5 * 60_000;
    expect((await creds.forWorkspace('ws_a')).accessKeyId).not.toBe(first.accessKeyId);
    expect(requests.map((r) => r.get('RoleSessionName'))).toEqual(['ws-ws_a', 'ws-ws_b', 'ws-ws_a']);
  });

  it('never calls STS for a workspace id that would widen the policy', async () => {
    requests.length = 0;
    await expect(source({ t: 0 }).forWorkspace('*')).rejects.toThrow('Refusing to mint credentials for workspace id "*"');
    expect(requests).toHaveLength(0);
  });

  it('mints environment-layer credentials narrowed to one layer (read, write) or one repository folder (delete), never outside environments/', async () => {
    requests.length = 0;
    const creds = source({ t: EXPIRATION - 15 * 60_000 });
    const key = environmentLayerKey('acme', { owner: 'Octo', name: 'App' }, 'c'.repeat(64));
    await creds.forEnvironment!(key, 'read');
    await creds.forEnvironment!(key, 'write');
    await creds.forEnvironment!('environments/acme/github/octo/app/', 'delete');
    const policies = requests.map((r) => JSON.parse(r.get('Policy')!));
    expect(policies[0].Statement).toEqual([
      { Sid: 'LayerObject', Effect: 'Allow', Action: ['s3:GetObject'], Resource: [`arn:aws:s3:::stratus-bucket/${key}`] },
    ]);
    expect(policies[1].Statement[0].Action).toEqual(['s3:GetObject', 's3:PutObject']);
    expect(policies[2].Statement).toEqual([
      {
        Sid: 'LayerListing',
        Effect: 'Allow',
        Action: ['s3:ListBucket', 's3:ListBucketVersions'],
        Resource: ['arn:aws:s3:::stratus-bucket'],
        Condition: { StringLike: { 's3:prefix': ['environments/acme/github/octo/app/*'] } },
      },
      {
        Sid: 'LayerDeletion',
        Effect: 'Allow',
        Action: ['s3:DeleteObject', 's3:DeleteObjectVersion'],
        Resource: ['arn:aws:s3:::stratus-bucket/environments/acme/github/octo/app/*'],
      },
    ]);
    // Another tenant's key for the same repository is another resource: nothing granted for one reaches the other.
    expect(environmentLayerKey('other', { owner: 'octo', name: 'app' }, 'c'.repeat(64))).not.toBe(key);
    await expect(creds.forEnvironment!('workspaces/ws_1/', 'delete')).rejects.toThrow('Refusing to mint environment credentials outside environments/');
    await expect(creds.forEnvironment!('environments/acme/*', 'delete')).rejects.toThrow('without wildcards');
    expect(requests).toHaveLength(3);
  });
});
