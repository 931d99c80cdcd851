import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { makeTarGz } from '../support/archive-fixtures.ts';
import { bash, text, useLocalStack } from '../support/stack-fixture.ts';
import { until } from '../support/until.ts';

const QUOTA = 700_000;

/** STRATUS_TENANT_STORAGE_QUOTA_BYTES on the local stack: what is counted, what is refused, what deletion gives back. */
describe('the per-tenant storage quota', () => {
  const fx = useLocalStack({ settings: { model: {}, turn: {}, api: {}, observability: {}, tenantStorageQuotaBytes: QUOTA } });
  const stored = () => fx.stack.deps.tenantUsage.storedBytes('local');

  const putArchive = (sessionId: string, archive: Buffer) =>
    fetch(`${fx.stack.apiUrl}/v1/sessions/${sessionId}/workspace/archive`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${fx.stack.token}`, 'content-type': 'application/gzip' },
      body: archive,
    }).then(async (res) => ({ status: res.status, json: (await res.json()) as { error?: { code: string; message: string } } }));

  async function bytesInS3(sessionId: string): Promise<number> {
    const { deps } = fx.stack;
    const workspaceId = (await fx.api.request('GET', `/v1/sessions/${sessionId}`)).json.workspace.id as string;
    const s3 = await deps.workspaceStorage(await deps.workspaceCredentials.forWorkspace(workspaceId));
    const out = await s3.send(new ListObjectsV2Command({ Bucket: deps.config.bucket, Prefix: `workspaces/${workspaceId}/` }));
    return (out.Contents ?? []).reduce((sum, o) => sum + (o.Size ?? 0), 0);
  }

  it('counts what workspaces store, refuses uploads, imports and writes past the quota with 413 storage_quota, and gives bytes back on deletion', async () => {
    const { api, stack } = fx;
    const a = await api.createSession();
    expect((await putArchive(a, await makeTarGz([{ name: 'data.bin', body: randomBytes(300_000) }]))).status).toBe(201);
    // The counter is what the workspace holds in S3 (the staged upload is gone and given back).
    const afterImport = await stored();
    expect(afterImport).toBe(await bytesInS3(a));
    expect(afterImport).toBeGreaterThan(300_000);

    // An upload that would pass the quota is refused before anything is stored.
    const b = await api.createSession();
    const tooBig = await putArchive(b, await makeTarGz([{ name: 'more.bin', body: randomBytes(450_000) }]));
    expect(tooBig.status).toBe(413);
    expect(tooBig.json.error!.code).toBe('storage_quota');
    expect(tooBig.json.error!.message).toMatch(
      new RegExp(
        `^Tenant local stores ${afterImport} bytes and storing \\d+ more bytes would pass its storage quota of ${QUOTA} bytes \\(STRATUS_TENANT_STORAGE_QUOTA_BYTES\\)\\.`,
      ),
    );
    expect(await bytesInS3(b)).toBe(0);
    expect(await stored()).toBe(afterImport);

    // A command's write is counted; once the tenant is past its quota the next write is refused.
    stack.model!.enqueue({ content: [bash('toolu_big', 'head -c 500000 /dev/urandom > big.bin')] }, text('wrote it'));
    expect((await api.turn(a, 'write a big file')).status).toBe(200);
    expect(await stored()).toBe(await bytesInS3(a));
    expect(await stored()).toBeGreaterThan(QUOTA);
    stack.model!.enqueue({ content: [bash('toolu_small', 'echo more > more.txt')] }, text('refused'));
    expect((await api.turn(a, 'write more')).status).toBe(200);
    const results = JSON.stringify(await api.messages(a));
    expect(results).toContain(`its storage quota of ${QUOTA} bytes (STRATUS_TENANT_STORAGE_QUOTA_BYTES)`);
    const files = (await api.request('GET', `/v1/sessions/${a}/workspace/files`)).json.files.map((f: { path: string }) => f.path);
    expect(files).not.toContain('more.txt');
    const seeded = await api.request('POST', '/v1/sessions', { files: { 'x.txt': 'x' } });
    expect(seeded.status).toBe(413);
    expect(seeded.json.error.code).toBe('storage_quota');
    const form = await api.request('POST', `/v1/sessions/${b}/workspace/uploads`, {});
    expect(form.status).toBe(413);
    expect(form.json.error.message).toContain('(STRATUS_TENANT_STORAGE_QUOTA_BYTES)');

    // Deleting the session gives its bytes back; the refused upload now fits.
    expect((await api.request('DELETE', `/v1/sessions/${a}`)).status).toBe(202);
    await until(
      () => stack.deps.sessions.get(a),
      (r) => r === undefined,
    );
    expect(await stored()).toBe(0);
    expect((await putArchive(b, await makeTarGz([{ name: 'more.bin', body: randomBytes(450_000) }]))).status).toBe(201);
    expect(await stored()).toBe(await bytesInS3(b));
  });
});

const exactArchive = await makeTarGz([{ name: 'notes.txt', body: Buffer.from('an archive whose own size is the whole quota\n'.repeat(200)) }]);

/** The staged archive's own reservation does not make its import "at quota". */
describe('an archive that exactly fills the storage quota', () => {
  const fx = useLocalStack({ settings: { model: {}, turn: {}, api: {}, observability: {}, tenantStorageQuotaBytes: exactArchive.length } });

  it('is imported (PUT), and the staged bytes are given back', async () => {
    const sessionId = await fx.api.createSession();
    const res = await fetch(`${fx.stack.apiUrl}/v1/sessions/${sessionId}/workspace/archive`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${fx.stack.token}`, 'content-type': 'application/gzip' },
      body: exactArchive,
    });
    expect(res.status, await res.clone().text()).toBe(201);
    expect(((await res.json()) as { files: number }).files).toBe(1);
    // What is left counted is the imported workspace, not the archive as well.
    const workspaceId = (await fx.api.request('GET', `/v1/sessions/${sessionId}`)).json.workspace.id as string;
    const s3 = await fx.stack.deps.workspaceStorage(await fx.stack.deps.workspaceCredentials.forWorkspace(workspaceId));
    const objects = (await s3.send(new ListObjectsV2Command({ Bucket: fx.stack.deps.config.bucket, Prefix: `workspaces/${workspaceId}/` }))).Contents ?? [];
    expect(objects.some((o) => o.Key!.includes('/uploads/'))).toBe(false);
    expect(await fx.stack.deps.tenantUsage.storedBytes('local')).toBe(objects.reduce((sum, o) => sum + (o.Size ?? 0), 0));
  });
});
