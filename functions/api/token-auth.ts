import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Deps } from '../deps/deps.ts';
import type { TokenRecord } from '../stores/token-store.ts';

/**
 * How long a token looked up in the table is trusted before it is read again: a revocation
 * takes effect within this on every instance (at once on the instance that revoked it).
 */
export const TOKEN_CACHE_TTL_MS = 30_000;
/** `lastUsedAt` is written at most this often per token, so use costs no write per request. */
const LAST_USED_EVERY_MS = 3600_000;
/** Entries kept at most; past it the cache starts afresh (a flood of made-up ids cannot grow it). */
const MAX_CACHED = 10_000;

/** The tenant an entry of STRATUS_API_TOKENS names to make it the admin token (never a tenant id). */
export const ADMIN_TENANT = '@admin';

export type Principal = { kind: 'tenant'; tenantId: string } | { kind: 'admin' };

/** A table token: `stk_` + 12 hex (its public id), a dot, 32 random bytes as base64url. */
const TABLE_TOKEN = /^(stk_[0-9a-f]{12})\.[A-Za-z0-9_-]{43}$/;

export function sha256(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/** A new token and what is stored of it; the plaintext goes to the caller once. */
export function mintToken(): { tokenId: string; token: string; tokenHash: string } {
  const tokenId = `stk_${randomBytes(6).toString('hex')}`;
  const token = `${tokenId}.${randomBytes(32).toString('base64url')}`;
  return { tokenId, token, tokenHash: sha256(token).toString('hex') };
}

export type TokenAuth = ReturnType<typeof createTokenAuth>;

/**
 * Who a bearer token is: the configured tokens first (STRATUS_API_TOKENS, compared by hash in
 * constant time; an entry for `@admin` is the admin token), then the tokens table, read by the
 * token's public id and compared by hash. Table answers are cached for TOKEN_CACHE_TTL_MS.
 */
export function createTokenAuth(deps: Pick<Deps, 'tokens' | 'clock' | 'log'>, configured: Record<string, string>) {
  const fixed = Object.entries(configured).map(([token, tenant]) => ({ digest: sha256(token), tenant }));
  const cache = new Map<string, { record: TokenRecord | undefined; fetchedAt: number }>();

  async function lookup(tokenId: string): Promise<TokenRecord | undefined> {
    const now = deps.clock();
    const hit = cache.get(tokenId);
    if (hit && now - hit.fetchedAt < TOKEN_CACHE_TTL_MS) return hit.record;
    const record = await deps.tokens.get(tokenId);
    if (cache.size >= MAX_CACHED) cache.clear();
    cache.set(tokenId, { record, fetchedAt: now });
    if (record && !record.revokedAt && (!record.lastUsedAt || now - Date.parse(record.lastUsedAt) >= LAST_USED_EVERY_MS)) {
      const at = new Date(now).toISOString();
      await deps.tokens.touch(tokenId, at).then(
        () => (record.lastUsedAt = at),
        (err: Error) => deps.log.warn('token last-used update failed', { tokenId, error: err.message }),
      );
    }
    return record;
  }

  return {
    async resolve(token: string): Promise<Principal | undefined> {
      const digest = sha256(token);
      const found = fixed.find((entry) => timingSafeEqual(entry.digest, digest));
      if (found) return found.tenant === ADMIN_TENANT ? { kind: 'admin' } : { kind: 'tenant', tenantId: found.tenant };
      const tokenId = TABLE_TOKEN.exec(token)?.[1];
      if (!tokenId) return undefined;
      const record = await lookup(tokenId);
      if (!record || record.revokedAt || !timingSafeEqual(Buffer.from(record.tokenHash, 'hex'), digest)) return undefined;
      return { kind: 'tenant', tenantId: record.tenantId };
    },
    /** Drops a cached answer (this instance sees a revocation at once). */
    forget(tokenId: string): void {
      cache.delete(tokenId);
    },
  };
}
