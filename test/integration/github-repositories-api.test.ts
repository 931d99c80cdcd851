import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalStack, type LocalStack } from '../../local/stack.ts';
import { apiClient } from '../support/api-client.ts';
import { startGithubApiServer, type GithubApiServer } from '../support/github-api-server.ts';
import { unscripted } from '../support/stack-fixture.ts';
import { makeTempDir } from '../support/temp-dir.ts';

describe('connected GitHub repositories (API)', () => {
  const tmp = makeTempDir();
  const ctx = {} as { stack: LocalStack; gh: GithubApiServer };
  const as = (token: string) => apiClient(ctx.stack.apiUrl, token);

  beforeAll(async () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    ctx.gh = await startGithubApiServer({ appId: '99', appPublicKey: publicKey });
    ctx.stack = await startLocalStack({
      dataDir: tmp.dir,
      brain: unscripted,
      writeMetrics: () => undefined,
      apiTokens: { 'token-a': 'tenant-a', 'token-b': 'tenant-b', 'token-admin': '@admin' },
      github: { webhookSecret: 's', appId: '99', privateKey: privateKey.export({ type: 'pkcs1', format: 'pem' }).toString(), apiUrl: ctx.gh.url },
      // The operator lets sessions reach exactly 127.0.0.1:9 (STRATUS_PRIVATE_NETWORK_ALLOW).
      settings: { model: {}, turn: {}, api: {}, observability: {}, outbound: { privateNetworkAllow: ['127.0.0.1:9'] } },
    });
    // tenant-a claims the App's installation on acme (the admin assigns it); tenant-b claims none.
    ctx.gh.addInstallation(11, 'acme');
    for (const [id, name] of [
      [1, 'Acme/Widgets'],
      [2, 'acme/second'],
      [3, 'acme/agents'],
      [4, 'acme/agents2'],
    ] as const)
      ctx.gh.addRepository({ id, fullName: name, installationId: 11 });
    expect((await as('token-admin').request('POST', '/v1/admin/github/installations', { installationId: 11, tenantId: 'tenant-a' })).status).toBe(201);
  });
  afterAll(async () => {
    await ctx.stack?.stop();
    await ctx.gh?.close();
    tmp.cleanup();
  });

  it('connects, reads, updates, lists and disconnects a repository, per tenant', async () => {
    const a = as('token-a');
    const created = await a.request('POST', '/v1/github/repositories', {
      repository: 'Acme/Widgets',
      settings: { permissionMode: 'acceptEdits', rules: { deny: ['Bash(curl:*)'] }, budgets: { maxModelCallsPerTurn: 20 } },
    });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({
      repository: 'Acme/Widgets',
      label: 'stratus',
      mention: '@stratus',
      allowBots: false,
      settings: { permissionMode: 'acceptEdits', budgets: { maxModelCallsPerTurn: 20 } },
    });
    expect((await a.request('GET', '/v1/github/repositories/acme/widgets')).json.repository).toBe('Acme/Widgets');
    const patched = await a.request('PATCH', '/v1/github/repositories/Acme/Widgets', { label: 'ai-fix', allowBots: true });
    expect(patched.json).toMatchObject({ label: 'ai-fix', allowBots: true, settings: { permissionMode: 'acceptEdits' } });
    // Another tenant sees nothing of it and cannot connect it too (it claimed no installation that lists it).
    const b = as('token-b');
    expect((await b.request('GET', '/v1/github/repositories/Acme/Widgets')).status).toBe(404);
    expect((await b.request('GET', '/v1/github/repositories')).json).toEqual({ repositories: [], nextCursor: null });
    expect((await b.request('POST', '/v1/github/repositories', { repository: 'acme/widgets' })).status).toBe(403);
    expect((await b.request('DELETE', '/v1/github/repositories/Acme/Widgets')).status).toBe(404);
    // Pagination with the shared cursors.
    await a.request('POST', '/v1/github/repositories', { repository: 'acme/second' });
    const page1 = await a.request('GET', '/v1/github/repositories?limit=1');
    expect(page1.json.repositories).toHaveLength(1);
    const page2 = await a.request('GET', `/v1/github/repositories?limit=1&cursor=${page1.json.nextCursor}`);
    expect(page2.json.repositories.map((r: { repository: string }) => r.repository)).not.toEqual(
      page1.json.repositories.map((r: { repository: string }) => r.repository),
    );
    expect((await b.request('GET', `/v1/github/repositories?limit=1&cursor=${page1.json.nextCursor}`)).json.error.code).toBe('invalid_cursor');
    expect((await a.request('DELETE', '/v1/github/repositories/Acme/Widgets')).status).toBe(204);
    expect((await a.request('GET', '/v1/github/repositories/Acme/Widgets')).status).toBe(404);
    expect((await a.request('GET', '/v1/github/runs')).json).toEqual({ runs: [], nextCursor: null });
  });

  it('keeps custom agents and MCP servers for every run, showing no header value', async () => {
    const a = as('token-a');
    const reviewer = { name: 'reviewer', description: 'Reviews the fix.', prompt: 'Review.', tools: ['Read'] };
    const mcpServers = { tracker: { type: 'http', url: 'http://127.0.0.1:9/mcp', headers: { authorization: 'Bearer s3cret-token' } } };
    const created = await a.request('POST', '/v1/github/repositories', {
      repository: 'acme/agents',
      settings: { agents: [reviewer], mcpServers, allowedDomains: ['127.0.0.1:9'] },
    });
    expect(created.status).toBe(201);
    expect(created.json.settings).toMatchObject({
      agents: [reviewer],
      mcpServers: { tracker: { type: 'http', url: 'http://127.0.0.1:9/mcp', headers: { authorization: '[redacted]' } } },
    });
    const read = await a.request('GET', '/v1/github/repositories/acme/agents');
    expect(read.text).not.toContain('s3cret-token');
    // Stored as given: the run's session gets the real header (functions/github/run-github-work.ts).
    expect((await ctx.stack.deps.github.getRepoById(3))!.settings!.mcpServers!.tracker!.headers).toEqual({ authorization: 'Bearer s3cret-token' });
    // An MCP server the outbound policy would never call is refused, as for a session.
    const elsewhere = { tracker: { ...mcpServers.tracker, url: 'http://127.0.0.1:10/mcp' } };
    const refused = await a.request('POST', '/v1/github/repositories', { repository: 'acme/agents2', settings: { mcpServers: elsewhere } });
    expect(refused.status).toBe(400);
    expect(refused.json.error.message).toContain('STRATUS_PRIVATE_NETWORK_ALLOW');
  });

  it('answers bad input with a 400 naming the field, and needs a bearer token', async () => {
    const a = as('token-a');
    const bad = async (body: unknown) => (await a.request('POST', '/v1/github/repositories', body)).json.error;
    expect(await bad({ repository: 'no-slash' })).toMatchObject({
      code: 'invalid_request',
      message: expect.stringContaining('"repository": expected "owner/name"'),
    });
    expect(await bad({ repository: 'a/b', mention: 'stratus' })).toMatchObject({ message: expect.stringContaining('"mention"') });
    expect(await bad({ repository: 'a/b', settings: { rules: { allow: ['Bash(unclosed'] } } })).toMatchObject({
      message: expect.stringContaining('settings.rules'),
    });
    expect(await bad({ repository: 'a/b', extra: 1 })).toMatchObject({ code: 'invalid_request' });
    expect((await fetch(`${ctx.stack.apiUrl}/v1/github/repositories`)).status).toBe(401);
    // The webhook itself takes no bearer token, only a signature.
    const unsigned = await fetch(`${ctx.stack.apiUrl}/v1/github/webhook`, {
      method: 'POST',
      body: '{}',
      headers: { 'x-github-event': 'ping', 'x-github-delivery': 'd' },
    });
    expect(unsigned.status).toBe(401);
    expect(((await unsigned.json()) as { error: { message: string } }).error.message).toContain('X-Hub-Signature-256');
  });
});
