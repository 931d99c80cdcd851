import { createMiddleware } from 'hono/factory';
import { ForbiddenError, UnauthorizedError } from '../shared/errors.ts';
import type { Principal, TokenAuth } from './token-auth.ts';
import { authorizationHeader } from './auth-header.ts';

export type AuthVariables = { tenantId: string };

/** The principal of `Authorization: Bearer …` (or the header CloudFront moved it to); 401 when it is missing, unknown or revoked. */
async function principalOf(auth: TokenAuth, header: string | undefined): Promise<Principal> {
  const match = /^Bearer\s+(.+)$/i.exec((header ?? '').trim());
  if (!match) throw new UnauthorizedError();
  const principal = await auth.resolve(match[1]!);
  if (!principal) throw new UnauthorizedError('Invalid or revoked bearer token.');
  return principal;
}

/**
 * Bearer-token auth for the tenant routes: each token maps to one tenant, and a tenant only
 * ever sees its own sessions. The admin token is refused here (403): it only administers (/v1/admin).
 */
export function bearerAuth(auth: TokenAuth) {
  return createMiddleware<{ Variables: AuthVariables }>(async (c, next) => {
    const principal = await principalOf(
      auth,
      authorizationHeader((name) => c.req.header(name)),
    );
    if (principal.kind === 'admin')
      throw new ForbiddenError('The admin token manages tokens and GitHub installations only (/v1/admin/...); use a tenant token here.');
    c.set('tenantId', principal.tenantId);
    await next();
  });
}

/** The admin routes: the admin token only; a tenant's token is a 403. */
export function adminAuth(auth: TokenAuth) {
  return createMiddleware(async (c, next) => {
    const principal = await principalOf(
      auth,
      authorizationHeader((name) => c.req.header(name)),
    );
    if (principal.kind !== 'admin')
      throw new ForbiddenError('This route needs the admin token (an `@admin` entry of STRATUS_API_TOKENS); a tenant token cannot use the admin routes.');
    await next();
  });
}
