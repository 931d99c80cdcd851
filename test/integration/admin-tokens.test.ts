import { createHash } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../functions/api/app.ts';
import { TOKEN_CACHE_TTL_MS } from '../../functions/api/token-auth.ts';
import { apiClient } from '../support/api-client.ts';
import { useLocalStack } from '../support/stack-fixture.ts';

describe('tenant tokens made through the admin routes', () => {
  const fx = useLocalStack({ apiTokens: { 'token-a': 'tenant-a', 'admin-secret': '@admin' } });
  const as = (token: string) => apiClient(fx.stack.apiUrl, token);

  it('creates a token that works at once, lists it without its secret, and refuses it once revoked', async () => {
    const admin = as('admin-secret');
    const created = await admin.request('POST', '/v1/admin/tokens', { tenantId: 'tenant-b', label: 'ci bot' });
    expect(created.status).toBe(201);
    const { token, tokenId } = created.json as { token: string; tokenId: string };
    expect(token.startsWith(`${tokenId}.`)).toBe(true);
    expect(created.json).toMatchObject({ tenantId: 'tenant-b', label: 'ci bot', lastUsedAt: null, revokedAt: null });

    // Only the hash is stored: no attribute of any item holds the token.
    const { deps } = fx.stack;
    const db = DynamoDBDocumentClient.from(
      new DynamoDBClient({ region: deps.config.region, endpoint: fx.stack.urls.dynamodb, credentials: deps.config.localCredentials }),
    );
    const items = (await db.send(new ScanCommand({ TableName: deps.config.tables.apiTokens }))).Items!;
    expect(items).toHaveLength(1);
    expect(JSON.stringify(items)).not.toContain(token.split('.')[1]);
    expect(items[0]!.tokenHash).toBe(createHash('sha256').update(token).digest('hex'));

    // The new tenant works and sees only its own sessions; tenant-a's are 404 to it.
    const b = as(token);
    const mine = await b.createSession({ 'b.txt': 'b' });
    const theirs = await as('token-a').createSession({ 'a.txt': 'a' });
    const listed = await b.request('GET', '/v1/sessions');
    expect(listed.status).toBe(200);
    expect(listed.json.sessions.map((s: { id: string }) => s.id)).toEqual([mine]);
    expect((await b.request('GET', `/v1/sessions/${theirs}`)).status).toBe(404);
    expect((await as('token-a').request('GET', `/v1/sessions/${mine}`)).status).toBe(404);

    const page = await admin.request('GET', '/v1/admin/tokens');
    expect(page.status).toBe(200);
    expect(page.json.tokens).toEqual([
      { tokenId, tenantId: 'tenant-b', label: 'ci bot', createdAt: created.json.createdAt, lastUsedAt: expect.any(String), revokedAt: null },
    ]);
    expect(page.text).not.toContain(token.split('.')[1]);

    const revoked = await admin.request('DELETE', `/v1/admin/tokens/${tokenId}`);
    expect(revoked.status).toBe(200);
    expect(revoked.json.revokedAt).toEqual(expect.any(String));
    const refused = await b.request('GET', '/v1/sessions');
    expect(refused.status).toBe(401);
    expect(refused.json.error).toEqual({ code: 'unauthorized', message: 'Invalid or revoked bearer token.' });
    // Revoking again changes nothing; an unknown id is a 404.
    expect((await admin.request('DELETE', `/v1/admin/tokens/${tokenId}`)).json.revokedAt).toBe(revoked.json.revokedAt);
    expect((await admin.request('DELETE', '/v1/admin/tokens/stk_000000000000')).status).toBe(404);
  });

  it('rotates without a redeploy: a new token for the tenant works while the old one is revoked', async () => {
    const admin = as('admin-secret');
    const old = (await admin.request('POST', '/v1/admin/tokens', { tenantId: 'tenant-c', label: 'v1' })).json;
    const session = await as(old.token).createSession();
    const next = (await admin.request('POST', '/v1/admin/tokens', { tenantId: 'tenant-c', label: 'v2' })).json;
    expect((await admin.request('DELETE', `/v1/admin/tokens/${old.tokenId}`)).status).toBe(200);
    expect((await as(old.token).request('GET', `/v1/sessions/${session}`)).status).toBe(401);
    expect((await as(next.token).request('GET', `/v1/sessions/${session}`)).status).toBe(200);
  });

  it('keeps the admin routes to the admin token and the admin token off the tenant routes', async () => {
    const none = await fetch(`${fx.stack.apiUrl}/v1/admin/tokens`);
    expect(none.status).toBe(401);
    expect((await as('wrong').request('GET', '/v1/admin/tokens')).status).toBe(401);
    const tenant = await as('token-a').request('POST', '/v1/admin/tokens', { tenantId: 'tenant-a', label: 'x' });
    expect(tenant.status).toBe(403);
    expect(tenant.json.error.code).toBe('forbidden');
    const made = (await as('admin-secret').request('POST', '/v1/admin/tokens', { tenantId: 'tenant-d', label: 'd' })).json;
    expect((await as(made.token).request('GET', '/v1/admin/tokens')).status).toBe(403);
    expect((await as(made.token).request('DELETE', `/v1/admin/tokens/${made.tokenId}`)).status).toBe(403);
    const adminOnTenant = await as('admin-secret').request('GET', '/v1/sessions');
    expect(adminOnTenant.status).toBe(403);
    // A made-up token of the right shape is a 401, not a 500.
    expect((await as(`stk_123456789abc.${'A'.repeat(43)}`).request('GET', '/v1/sessions')).status).toBe(401);
  });

  it('answers hostile input with 4xx and stores nothing', async () => {
    const admin = as('admin-secret');
    const before = (await admin.request('GET', '/v1/admin/tokens?limit=200')).json.tokens.length;
    for (const body of [
      {},
      { tenantId: '@admin', label: 'x' },
      { tenantId: '', label: 'x' },
      { tenantId: 'a/b', label: 'x' },
      { tenantId: 'x'.repeat(65), label: 'x' },
      { tenantId: 't', label: '' },
      { tenantId: 't', label: 'x'.repeat(201) },
      { tenantId: 't', label: 'x', extra: true },
      { tenantId: 't\u0000', label: 'x' },
    ]) {
      const res = await admin.request('POST', '/v1/admin/tokens', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.json.error.code).toBe('invalid_request');
    }
    const big = await admin.request('POST', '/v1/admin/tokens', { tenantId: 't', label: 'x'.repeat(20_000) });
    expect(big.status).toBe(413);
    const text = await fetch(`${fx.stack.apiUrl}/v1/admin/tokens`, {
      method: 'POST',
      headers: { authorization: 'Bearer admin-secret', 'content-type': 'text/plain' },
      body: 'hi',
    });
    expect(text.status).toBe(415);
    expect((await admin.request('GET', '/v1/admin/tokens?cursor=bogus')).status).toBe(400);
    expect((await admin.request('GET', '/v1/admin/tokens?limit=0')).status).toBe(400);
    expect((await admin.request('DELETE', `/v1/admin/tokens/${'x'.repeat(5000)}`)).status).toBe(404);
    expect((await admin.request('GET', '/v1/admin/tokens?limit=200')).json.tokens.length).toBe(before);
  });
});

describe('a revocation seen by another instance', () => {
  const fx = useLocalStack({ apiTokens: { 'admin-secret': '@admin' } });

  it("takes effect once that instance's cached lookup is older than TOKEN_CACHE_TTL_MS", async () => {
    let now = Date.now();
    // A second API instance over the same tables, with its own token cache and a clock the test moves.
    const other = createApp({ ...fx.stack.deps, clock: () => now });
    const admin = apiClient(fx.stack.apiUrl, 'admin-secret');
    const made = (await admin.request('POST', '/v1/admin/tokens', { tenantId: 'tenant-e', label: 'e' })).json;
    const ask = async () => (await other.fetch(new Request('http://other/v1/sessions', { headers: { authorization: `Bearer ${made.token}` } }))).status;
    expect(await ask()).toBe(200);
    expect((await admin.request('DELETE', `/v1/admin/tokens/${made.tokenId}`)).status).toBe(200);
    now += TOKEN_CACHE_TTL_MS - 1_000;
    expect(await ask()).toBe(200);
    now += 2_000;
    expect(await ask()).toBe(401);
  });
});
