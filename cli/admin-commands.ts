import createClient from 'openapi-fetch';
import type { paths } from './generated/api.d.ts';
import { ok } from './client.ts';
import { cliFetch } from './http.ts';
import { CliError, EXIT } from './exit-codes.ts';

type Print = (human: string, json: unknown) => void;

/** A client of the admin routes (`/v1/admin/…`) with the admin token, through the CLI's own fetch like every other command. */
export function adminClient(baseUrl: string, adminToken: string | undefined) {
  if (!adminToken) throw new CliError('Give the admin token with --admin-token or STRATUS_ADMIN_TOKEN.', EXIT.usage);
  return createClient<paths, `application/${string}`>({ baseUrl, headers: { authorization: `Bearer ${adminToken}` }, fetch: cliFetch });
}

/**
 * `stratus admin tokens create|ls|revoke`: tenant tokens through /v1/admin/tokens, with the admin
 * token (`--admin-token`, or `STRATUS_ADMIN_TOKEN`) against the logged-in API URL.
 */
export function adminTokenCommands(url: () => string, adminToken: string | undefined, print: Print) {
  const api = () => adminClient(url(), adminToken);
  return {
    async create(o: { tenant: string; label: string }) {
      const made = ok(await api().POST('/v1/admin/tokens', { body: { tenantId: o.tenant, label: o.label } }));
      print(`${made.token}\n(token ${made.tokenId} for tenant ${made.tenantId}: shown only now; Stratus keeps its hash)`, made);
    },
    async list() {
      const tokens = [];
      let cursor: string | undefined;
      do {
        const page = ok(await api().GET('/v1/admin/tokens', { params: { query: { limit: 200, ...(cursor ? { cursor } : {}) } } }));
        tokens.push(...page.tokens);
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
      const rows = tokens.map(
        (t) => `${t.tokenId}  ${t.tenantId.padEnd(20)} ${(t.revokedAt ? `revoked ${t.revokedAt}` : `used ${t.lastUsedAt ?? 'never'}`).padEnd(34)} ${t.label}`,
      );
      print(rows.join('\n') || '(no tokens)', { tokens });
    },
    async revoke(tokenId: string) {
      const revoked = ok(await api().DELETE('/v1/admin/tokens/{tokenId}', { params: { path: { tokenId } } }));
      print(`${revoked.tokenId} revoked at ${revoked.revokedAt}`, revoked);
    },
  };
}
