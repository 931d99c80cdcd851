import { timingSafeEqual, createHash } from 'node:crypto';
import { createMiddleware } from 'hono/factory';
import { UnauthorizedError } from '../shared/errors.ts';
import { authorizationHeader } from './auth-header.ts';

export type AuthVariables = { tenantId: string };

/**
 * Bearer-token auth: each token maps to one tenant, and a tenant only ever sees its own
 * sessions. Tokens are compared by their SHA-256 in constant time.
 */
export function bearerAuth(tokens: Record<string, string>) {
  const table = Object.entries(tokens).map(([token, tenant]) => ({ digest: sha256(token), tenant }));
  return createMiddleware<{ Variables: AuthVariables }>(async (c, next) => {
    const header = authorizationHeader((name) => c.req.header(name));
    const match = /^Bearer\s+(.+)$/i.exec(header.trim());
    if (!match) throw new UnauthorizedError();
    const digest = sha256(match[1]!);
    const found = table.find((entry) => timingSafeEqual(entry.digest, digest));
    if (!found) throw new UnauthorizedError('Invalid bearer token.');
    c.set('tenantId', found.tenant);
    await next();
  });
}

function sha256(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}
