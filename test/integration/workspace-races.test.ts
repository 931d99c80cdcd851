import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { makeTarGz } from '../support/archive-fixtures.ts';
import { bash, text, useLocalStack } from '../support/stack-fixture.ts';
import { until } from '../support/until.ts';

/** Uploads `archive` with a presigned form the way a browser would: the fields, then the file last. */
async function postForm(form: { url: string; fields: Record<string, string> }, archive: Buffer): Promise<Response> {
  const body = new FormData();
  for (const [name, value] of Object.entries(form.fields)) body.append(name, value);
  body.append('file', new Blob([archive], { type: 'application/gzip' }), 'archive.tar.gz');
  return fetch(form.url, { method: 'POST', body });
}

/** Concurrent deletions and imports, and hostile archives, through the API of the local stack. */
describe('workspace races and hostile archives', () => {
  const fx = useLocalStack({});

  const putArchive = (sessionId: string, archive: Buffer) =>
    fetch(`${fx.stack.apiUrl}/v1/sessions/${sessionId}/workspace/archive`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${fx.stack.token}`, 'content-type': 'application/gzip' },
      body: archive,
    }).then(async (res) => ({
      status: res.status,
      json: (await res.json()) as { error?: { code: string; message: string }; workspace?: { version: number } },
    }));

  async function workspaceObjects(workspaceId: string): Promise<string[]> {
    const { deps } = fx.stack;
    const s3 = await deps.workspaceStorage(await deps.workspaceCredentials.forWorkspace(workspaceId));
    const out = await s3.send(new ListObjectsV2Command({ Bucket: deps.config.bucket, Prefix: `workspaces/${workspaceId}/` }));
    return (out.Contents ?? []).map((o) => o.Key!);
  }

  it('answers concurrent DELETEs of one session with one 202 and 202/404 for the rest, purges once, and removes the warm copy from the runner', async () => {
    const { api, stack } = fx;
    const sessionId = await api.createSession({ 'a.txt': 'seed\n' });
    stack.model!.enqueue({ content: [bash('toolu_1', 'echo made > made.txt')] }, text('done'));
    const turn = await api.turn(sessionId, 'make a file');
    expect(turn.status).toBe(200);
    const workspaceId = (await api.request('GET', `/v1/sessions/${sessionId}`)).json.workspace.id as string;
    // The runner process of this workspace (its tenant) keeps the warm copy in its own folder.
    const warmCopy = path.join(fx.dataDir, 'runner', 'tenants', workspaceId, 'workspaces', workspaceId);
    expect(existsSync(path.join(warmCopy, 'tree', 'made.txt'))).toBe(true);
    expect(await workspaceObjects(workspaceId)).not.toHaveLength(0);

    const statuses = (await Promise.all(Array.from({ length: 5 }, () => api.request('DELETE', `/v1/sessions/${sessionId}`)))).map((r) => r.status);
    expect(statuses.filter((s) => s === 202).length).toBeGreaterThanOrEqual(1);
    expect(
      statuses.every((s) => s === 202 || s === 404),
      JSON.stringify(statuses),
    ).toBe(true);

    await until(
      () => stack.deps.sessions.get(sessionId),
      (r) => r === undefined,
    );
    expect(await stack.deps.messages.loadFrom(sessionId)).toEqual([]);
    expect(await stack.deps.events.listAfter(sessionId, turn.json.turnId, -1)).toEqual([]);
    expect(await workspaceObjects(workspaceId)).toEqual([]);
    expect(existsSync(warmCopy)).toBe(false);
    expect((await api.request('DELETE', `/v1/sessions/${sessionId}`)).status).toBe(404);
  });

  it('imports one upload once under three concurrent imports: one 201, two 409, and the files are all there', async () => {
    const { api } = fx;
    const sessionId = await api.createSession();
    const binary = randomBytes(400_000);
    const archive = await makeTarGz([
      { name: 'src/data.bin', body: binary },
      { name: 'src/readme.md', body: '# hi\n' },
    ]);
    const form = await api.request('POST', `/v1/sessions/${sessionId}/workspace/uploads`, { bytes: archive.length });
    expect((await postForm(form.json, archive)).status).toBe(204);

    const results = await Promise.all(
      Array.from({ length: 3 }, () => api.request('POST', `/v1/sessions/${sessionId}/workspace/archive`, { uploadId: form.json.uploadId })),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses, JSON.stringify(results.map((r) => r.json))).toEqual([201, 409, 409]);
    for (const loser of results.filter((r) => r.status === 409)) {
      expect(['session_busy', 'workspace_not_empty']).toContain(loser.json.error.code);
      expect(loser.json.error.message).toMatch(/busy: another import|already has workspace content/);
    }
    const listed = await api.request('GET', `/v1/sessions/${sessionId}/workspace/files`);
    expect(listed.json.workspace.version).toBe(1);
    expect(listed.json.files).toContainEqual({ path: 'src/data.bin', type: 'file', size: 400_000, mode: 0o644 });
    const file = await fetch(`${fx.stack.apiUrl}/v1/sessions/${sessionId}/workspace/files/src/data.bin`, {
      headers: { authorization: `Bearer ${fx.stack.token}` },
    });
    expect(Buffer.from(await file.arrayBuffer()).equals(binary)).toBe(true);
  });

  it('refuses deep, long-named, corrupt and non-gzip archives with a 400 naming the problem, and the session still imports a good one', async () => {
    const sessionId = await fx.api.createSession();
    const deep = `${Array.from({ length: 2_100 }, () => 'd').join('/')}/x.txt`;
    const good = await makeTarGz([{ name: 'ok.txt', body: 'fine\n' }]);
    const cases: [string, Buffer, RegExp][] = [
      [
        '2,100 nested directories',
        await makeTarGz([{ name: deep, body: 'x' }]),
        /^Archive entry "d\/d\/d\/.*…" cannot be stored in a workspace: it is 4205 bytes long; at most 3072 are allowed\.$/,
      ],
      [
        '300 levels of one-letter directories',
        await makeTarGz([{ name: `${Array.from({ length: 300 }, () => 'd').join('/')}/x`, body: 'x' }]),
        /is 301 directories deep; at most 256 are allowed\.$/,
      ],
      [
        'a 300-character name',
        await makeTarGz([{ name: `dir/${'n'.repeat(300)}`, body: 'x' }]),
        /^Archive entry "dir\/n+…" cannot be stored in a workspace: its component "n+…" is 300 bytes long; at most 255 are allowed per component\.$/,
      ],
      ['random bytes', randomBytes(4_096), /^The upload is not a gzip'd tar archive \(.+\); send a \.tar\.gz file\.$/],
      [
        'gzip of random bytes (not a tar)',
        gzipSync(randomBytes(4_096)),
        /^The upload is not a gzip'd tar archive \(Invalid tar header.*\); send a \.tar\.gz file\.$/,
      ],
      [
        'a truncated archive',
        (await makeTarGz([{ name: 'big.bin', body: randomBytes(200_000) }])).subarray(0, 100_000),
        /^The upload is not a gzip'd tar archive \(unexpected end of file\); send a \.tar\.gz file\.$/,
      ],
      [
        'gzip magic then random bytes',
        Buffer.concat([Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3]), randomBytes(4_096)]),
        /^The upload is not a gzip'd tar archive/,
      ],
    ];
    for (const [what, archive, message] of cases) {
      const res = await putArchive(sessionId, archive);
      expect(res.status, what).toBe(400);
      expect(res.json.error!.code, what).toBe('invalid_request');
      expect(res.json.error!.message, what).toMatch(message);
    }
    // Nothing was imported by any of them; the workspace is still empty and takes a good archive.
    expect((await fx.api.request('GET', `/v1/sessions/${sessionId}`)).json.workspace.version).toBe(0);
    expect(await putArchive(sessionId, good)).toMatchObject({ status: 201, json: { workspace: { version: 1 } } });
  });

  it('stops a gzip bomb while it streams with a 413 naming the expansion limit', async () => {
    const sessionId = await fx.api.createSession();
    // 256 MiB of zeros in ~260 KB: about 1,000 to 1, gzip's ceiling.
    const bomb = await makeTarGz([{ name: 'zeros.bin', body: Buffer.alloc(256 * 1024 * 1024) }]);
    expect(bomb.length).toBeLessThan(300_000);
    const started = Date.now();
    const res = await putArchive(sessionId, bomb);
    expect(res.status).toBe(413);
    expect(res.json.error!.code).toBe('workspace_limit');
    expect(res.json.error!.message).toBe(
      `The archive expands to more than ${bomb.length * 100} bytes from ${bomb.length} compressed bytes: an import may expand at most 100 times the archive's size (at least 16777216 bytes). Nothing was imported.`,
    );
    // Refused after ~26 MB of output, not after writing 256 MiB.
    expect(Date.now() - started).toBeLessThan(20_000);
    expect((await fx.api.request('GET', `/v1/sessions/${sessionId}`)).json.workspace.version).toBe(0);
  });
});
