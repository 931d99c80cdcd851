import { randomBytes } from 'node:crypto';
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { useLocalStack } from '../support/stack-fixture.ts';
import { makeTarGz } from '../support/archive-fixtures.ts';

/** Uploads `archive` with a presigned form the way a browser would: the fields, then the file last. */
async function postForm(form: { url: string; fields: Record<string, string> }, archive: Buffer): Promise<Response> {
  const body = new FormData();
  for (const [name, value] of Object.entries(form.fields)) body.append(name, value);
  body.append('file', new Blob([archive], { type: 'application/gzip' }), 'archive.tar.gz');
  return fetch(form.url, { method: 'POST', body });
}

describe('presigned archive uploads on the local stack', () => {
  const fx = useLocalStack({});

  it('uploads an archive straight to S3 with the form, imports it by reference, and removes the upload', async () => {
    const id = await fx.api.createSession();
    const binary = randomBytes(300_000);
    const archive = await makeTarGz([
      { name: 'big/data.bin', body: binary },
      { name: 'big/readme.md', body: '# hi\n' },
    ]);
    const form = await fx.api.request('POST', `/v1/sessions/${id}/workspace/uploads`, { bytes: archive.length });
    expect(form.status).toBe(201);
    expect(form.json).toMatchObject({ uploadId: expect.stringMatching(/^up_/), maxBytes: 2 * 1024 ** 3 });
    expect(form.json.fields.key).toBe(
      `workspaces/${(await fx.api.request('GET', `/v1/sessions/${id}`)).json.workspace.id}/uploads/${form.json.uploadId}.tar.gz`,
    );
    // The policy names the size range and the expiry S3 enforces.
    const policy = JSON.parse(Buffer.from(form.json.fields.Policy, 'base64').toString('utf8'));
    expect(policy.conditions).toContainEqual(['content-length-range', 1, 2 * 1024 ** 3]);
    expect(Date.parse(policy.expiration) - Date.now()).toBeLessThanOrEqual(300_000);
    // The tag the bucket's lifecycle rule expires staged uploads by (s3rver keeps no tags from a POST; the rule is asserted on the template).
    const tagging = '<Tagging><TagSet><Tag><Key>stratus-expiry</Key><Value>1d</Value></Tag></TagSet></Tagging>';
    expect(form.json.fields.tagging).toBe(tagging);
    expect(policy.conditions).toContainEqual(['eq', '$tagging', tagging]);

    const uploaded = await postForm(form.json, archive);
    expect(uploaded.status).toBe(204);
    const { deps } = fx.stack;
    const workspaceId = (form.json.fields.key as string).split('/')[1]!;
    const s3 = await deps.workspaceStorage(await deps.workspaceCredentials.forWorkspace(workspaceId));
    const head = () =>
      s3.send(new HeadObjectCommand({ Bucket: deps.config.bucket, Key: form.json.fields.key })).then(
        (o) => o.ContentLength,
        (err: { $metadata: { httpStatusCode: number } }) => err.$metadata.httpStatusCode,
      );
    expect(await head()).toBe(archive.length);

    const imported = await fx.api.request('POST', `/v1/sessions/${id}/workspace/archive`, { uploadId: form.json.uploadId });
    expect(imported.status).toBe(201);
    expect(imported.json).toMatchObject({ workspace: { version: 1 }, files: 2, bytes: 300_005, skipped: 0 });
    const listed = await fx.api.request('GET', `/v1/sessions/${id}/workspace/files`);
    expect(listed.json.files).toContainEqual({ path: 'big/data.bin', type: 'file', size: 300_000, mode: 0o644 });
    const file = await fetch(`${fx.stack.apiUrl}/v1/sessions/${id}/workspace/files/big/data.bin`, { headers: { authorization: `Bearer ${fx.stack.token}` } });
    expect(Buffer.from(await file.arrayBuffer()).equals(binary)).toBe(true);
    expect(await head()).toBe(404);

    // Filled now: neither a new form nor a second import.
    const again = await fx.api.request('POST', `/v1/sessions/${id}/workspace/uploads`, {});
    expect(again.status).toBe(409);
    expect(again.json.error.code).toBe('workspace_not_empty');
    const reimport = await fx.api.request('POST', `/v1/sessions/${id}/workspace/archive`, { uploadId: form.json.uploadId });
    expect(reimport.status).toBe(409);
  });

  it('refuses unknown, foreign, not-yet-uploaded and oversized uploads with clear 4xx errors', async () => {
    const [a, b] = [await fx.api.createSession(), await fx.api.createSession()];
    const form = await fx.api.request('POST', `/v1/sessions/${a}/workspace/uploads`);
    expect(form.status).toBe(201);
    // Not uploaded yet.
    const early = await fx.api.request('POST', `/v1/sessions/${a}/workspace/archive`, { uploadId: form.json.uploadId });
    expect(early.status).toBe(404);
    expect(early.json.error.message).toContain(`No upload "${form.json.uploadId}" for session ${a}`);
    expect((await postForm(form.json, await makeTarGz([{ name: 'x.txt', body: 'x' }]))).status).toBe(204);
    // Another session's upload is not found from this one, and stays importable by its own.
    const foreign = await fx.api.request('POST', `/v1/sessions/${b}/workspace/archive`, { uploadId: form.json.uploadId });
    expect(foreign.status).toBe(404);
    expect(foreign.json.error.message).toContain(`for session ${b}`);
    expect((await fx.api.request('POST', `/v1/sessions/${a}/workspace/archive`, { uploadId: form.json.uploadId })).status).toBe(201);

    for (const uploadId of ['up_nope', '../../x', 'x'.repeat(256)]) {
      const res = await fx.api.request('POST', `/v1/sessions/${b}/workspace/archive`, { uploadId });
      expect(res.status).toBe(404);
      expect(res.json.error.code).toBe('not_found');
    }
    const tooLarge = await fx.api.request('POST', `/v1/sessions/${b}/workspace/uploads`, { bytes: 3 * 1024 ** 3 });
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.json.error).toEqual({
      code: 'workspace_limit',
      message: `The archive is ${3 * 1024 ** 3} bytes; at most ${2 * 1024 ** 3} bytes are accepted.`,
    });
    const hostile = await fx.api.request('POST', `/v1/sessions/${b}/workspace/archive`, { uploadId: 'up_x', extra: 1 });
    expect(hostile.status).toBe(400);
    expect((await fx.api.request('POST', `/v1/sessions/${b}/workspace/archive`, { uploadId: 'x'.repeat(257) })).status).toBe(400);
    expect((await fx.api.request('POST', '/v1/sessions/ses_nope/workspace/uploads', {})).status).toBe(404);
  });

  it('answers a retried form request with the same Idempotency-Key with the first form', async () => {
    const id = await fx.api.createSession();
    const first = await fx.api.request('POST', `/v1/sessions/${id}/workspace/uploads`, {}, { 'idempotency-key': 'form-1' });
    const retry = await fx.api.request('POST', `/v1/sessions/${id}/workspace/uploads`, {}, { 'idempotency-key': 'form-1' });
    expect(first.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.json.uploadId).toBe(first.json.uploadId);
  });
});
