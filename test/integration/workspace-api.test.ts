import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalStack, type LocalStack } from '../../local/stack.ts';
import { apiClient } from '../support/api-client.ts';
import { startGitHttpServer } from '../support/git-http-server.ts';
import { makeTempDir } from '../support/temp-dir.ts';
import { makeTarGz, readTarGz } from '../support/archive-fixtures.ts';

describe('workspace API on the local stack', () => {
  const temp = makeTempDir('stratus-wsapi-');
  let stack: LocalStack;
  let api: ReturnType<typeof apiClient>;
  beforeAll(async () => {
    stack = await startLocalStack({ dataDir: temp.dir });
    api = apiClient(stack.apiUrl, stack.token);
  });
  afterAll(async () => {
    await stack?.stop();
    temp.cleanup();
  });

  const raw = (method: string, p: string, body?: Buffer) =>
    fetch(`${stack.apiUrl}${p}`, { method, headers: { authorization: `Bearer ${stack.token}` }, ...(body ? { body } : {}) });

  it('creates a workspace from a tar.gz upload and gives files and the archive back byte for byte', async () => {
    const id = await api.createSession();
    const binary = randomBytes(2_500_000);
    const archive = await makeTarGz([
      { name: 'app/data.bin', body: binary, mode: 0o644 },
      { name: 'app/main.sh', body: 'echo main\n', mode: 0o755 },
      { name: 'app/current', type: 'symlink', linkname: 'main.sh' },
    ]);
    const put = await raw('PUT', `/v1/sessions/${id}/workspace/archive`, archive);
    expect(put.status).toBe(201);
    const created = (await put.json()) as { workspace: { id: string; version: number } };
    expect(created).toMatchObject({ workspace: { version: 1 }, files: 2, bytes: 2_500_010, skipped: 0 });

    const session = await api.request('GET', `/v1/sessions/${id}`);
    expect(session.json.workspace).toEqual({ id: created.workspace.id, version: 1 });

    const listed = await api.request('GET', `/v1/sessions/${id}/workspace/files`);
    expect(listed.status).toBe(200);
    expect(listed.json.files).toEqual([
      { path: 'app', type: 'dir', mode: 0o755 },
      { path: 'app/current', type: 'symlink', target: 'main.sh' },
      { path: 'app/data.bin', type: 'file', size: 2_500_000, mode: 0o644 },
      { path: 'app/main.sh', type: 'file', size: 10, mode: 0o755 },
    ]);

    const file = await raw('GET', `/v1/sessions/${id}/workspace/files/app/data.bin`);
    expect(file.status).toBe(200);
    expect(Buffer.from(await file.arrayBuffer()).equals(binary)).toBe(true);

    const exported = await raw('GET', `/v1/sessions/${id}/workspace/archive`);
    expect(exported.status).toBe(200);
    expect(exported.headers.get('content-type')).toBe('application/gzip');
    const entries = await readTarGz(Buffer.from(await exported.arrayBuffer()));
    expect(entries.map((e) => e.name)).toEqual(['app', 'app/current', 'app/data.bin', 'app/main.sh']);
    expect(entries[2]!.body.equals(binary)).toBe(true);

    const again = await raw('PUT', `/v1/sessions/${id}/workspace/archive`, archive);
    expect(again.status).toBe(409);
    expect(await again.json()).toEqual({
      error: { code: 'workspace_not_empty', message: `Session ${id} already has workspace content (version 1); import into a new session.` },
    });
  });

  it('answers bad uploads and bad paths with clear 4xx errors', async () => {
    const id = await api.createSession();
    const bad = await raw('PUT', `/v1/sessions/${id}/workspace/archive`, Buffer.from('plain text'));
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({
      error: { code: 'invalid_request', message: "The upload is not a gzip'd tar archive (incorrect header check); send a .tar.gz file." },
    });
    const evil = await raw('PUT', `/v1/sessions/${id}/workspace/archive`, await makeTarGz([{ name: '../x', body: 'x' }]));
    expect(await evil.json()).toEqual({ error: { code: 'invalid_request', message: 'Archive entry "../x" points outside the workspace.' } });

    // An upload declared larger than any workspace may hold is refused before its body is read.
    const huge = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const url = new URL(`${stack.apiUrl}/v1/sessions/${id}/workspace/archive`);
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: 'PUT',
          headers: { authorization: `Bearer ${stack.token}`, 'content-length': String(3 * 1024 ** 3) },
        },
        (res) => {
          let body = '';
          res.on('data', (c: Buffer) => (body += c.toString()));
          res.on('end', () => {
            req.destroy();
            resolve({ status: res.statusCode ?? 0, body });
          });
        },
      );
      req.on('error', reject);
      req.write('x');
    });
    expect(huge.status).toBe(413);
    expect(JSON.parse(huge.body)).toEqual({
      error: { code: 'workspace_limit', message: `The archive is ${3 * 1024 ** 3} bytes; at most ${2 * 1024 ** 3} bytes are accepted.` },
    });

    const missing = await api.request('GET', `/v1/sessions/${id}/workspace/files/nope.txt`);
    expect(missing.status).toBe(400);
    expect(missing.json).toEqual({ error: { code: 'invalid_request', message: 'No file "nope.txt" in the workspace.' } });
    const gitBad = await api.request('POST', `/v1/sessions/${id}/workspace/git`, { url: 'ssh://host/repo.git' });
    expect(gitBad.json).toEqual({ error: { code: 'invalid_request', message: 'Only https:// and http:// git URLs are allowed, not ssh://.' } });
  });

  it('creates a workspace from a git URL with a token', async () => {
    const root = path.join(temp.dir, 'git');
    const work = path.join(root, 'src');
    mkdirSync(work, { recursive: true });
    const git = (...args: string[]) => execFileSync('git', ['-C', work, '-c', 'user.name=t', '-c', 'user.email=t@e', ...args]);
    git('init', '-q', '-b', 'trunk');
    writeFileSync(path.join(work, 'hello.txt'), 'hello from git\n');
    git('add', '.');
    git('commit', '-qm', 'init');
    execFileSync('git', ['clone', '-q', '--bare', work, path.join(root, 'p.git')]);
    const server = await startGitHttpServer({ projectRoot: root, token: 'secret-t' });
    try {
      const id = await api.createSession();
      const res = await api.request('POST', `/v1/sessions/${id}/workspace/git`, { url: `${server.url}/p.git`, token: 'secret-t', ref: 'trunk' });
      expect(res.status).toBe(201);
      expect(res.json).toMatchObject({ workspace: { version: 1 }, ref: 'trunk', depth: 1 });
      const file = await raw('GET', `/v1/sessions/${id}/workspace/files/hello.txt`);
      expect(await file.text()).toBe('hello from git\n');
    } finally {
      await server.close();
    }
  });
});
