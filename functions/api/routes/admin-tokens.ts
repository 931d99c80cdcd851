import { createRoute, z, type RouteHandler } from '@hono/zod-openapi';
import type { Deps } from '../../deps/deps.ts';
import { NotFoundError, SystemError } from '../../shared/errors.ts';
import type { TokenRecord } from '../../stores/token-store.ts';
import { adminAuth } from '../auth.ts';
import { createRouteApp, jsonBodyLimit, type ApiEnv } from '../route-app.ts';
import { errorResponses, json, nextCursorSchema, pageQuerySchema } from '../schemas/common.ts';
import { mintToken, TOKEN_CACHE_TTL_MS, type TokenAuth } from '../token-auth.ts';

const tags = ['Admin'];
/** Tenant ids as the stores use them in keys and cursors: short, printable, never `@admin`. */
export const tenantIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, 'letters, digits, "_", "." and "-", starting with a letter or digit, at most 64');

const tokenView = z
  .object({
    tokenId: z.string().describe('Public id: the start of the token, safe to show and log'),
    tenantId: z.string(),
    label: z.string(),
    createdAt: z.string(),
    lastUsedAt: z.string().nullable().describe('Updated at most once an hour'),
    revokedAt: z.string().nullable(),
  })
  .openapi('ApiToken');
const createBody = z.strictObject({ tenantId: tenantIdSchema, label: z.string().min(1).max(200) }).openapi('CreateApiToken');
const tokenIdParam = z.object({ tokenId: z.string().describe('Public token id (`stk_…`)') });

const create = createRoute({
  method: 'post',
  path: '/tokens',
  tags,
  summary: 'Create a tenant token (the plaintext is answered once)',
  description: 'The token is stored as its SHA-256 only. No Idempotency-Key: a replayed answer would have to keep the plaintext.',
  middleware: [jsonBodyLimit(16 * 1024)] as const,
  request: { body: { content: { 'application/json': { schema: createBody } }, required: true } },
  responses: {
    201: json(tokenView.extend({ token: z.string().describe('The bearer token; shown only now') }), 'The new token'),
    ...errorResponses(400, 403, 413, 415),
  },
});
const list = createRoute({
  method: 'get',
  path: '/tokens',
  tags,
  summary: 'The tenant tokens (no secrets)',
  request: { query: pageQuerySchema },
  responses: { 200: json(z.object({ tokens: z.array(tokenView), nextCursor: nextCursorSchema }), 'A page of tokens'), ...errorResponses(400, 403) },
});
const revoke = createRoute({
  method: 'delete',
  path: '/tokens/{tokenId}',
  tags,
  summary: 'Revoke a tenant token',
  description: `The token answers 401 within ${TOKEN_CACHE_TTL_MS / 1000} s on every instance (at once on the one that revoked it). The record stays, with \`revokedAt\`; revoking again changes nothing.`,
  request: { params: tokenIdParam },
  responses: { 200: json(tokenView, 'The revoked token'), ...errorResponses(403, 404) },
});

/**
 * Token administration, with the admin token only (an `@admin` entry of STRATUS_API_TOKENS):
 *   POST   /tokens            { tenantId, label } → the token, once
 *   GET    /tokens            every token without its secret
 *   DELETE /tokens/:tokenId   revoke
 * Rotation: create the new token, move clients to it, revoke the old one. No redeploy.
 */
export function adminTokenRoutes(deps: Pick<Deps, 'tokens' | 'clock'>, auth: TokenAuth) {
  const app = createRouteApp();
  app.use('*', adminAuth(auth));
  app.openapi(create, createHandler(deps));
  app.openapi(list, async (c) => {
    const { limit, cursor } = c.req.valid('query');
    const page = await deps.tokens.list({ limit, cursor });
    return c.json({ tokens: page.tokens.map(view), nextCursor: page.nextCursor }, 200);
  });
  app.openapi(revoke, async (c) => {
    const { tokenId } = c.req.valid('param');
    const record = /^stk_[0-9a-f]{12}$/.test(tokenId) ? await deps.tokens.revoke(tokenId, new Date(deps.clock()).toISOString()) : undefined;
    if (!record) throw new NotFoundError(`No token ${JSON.stringify(tokenId.slice(0, 64))}; GET /v1/admin/tokens lists them.`);
    auth.forget(tokenId);
    return c.json(view(record), 200);
  });
  return app;
}

function createHandler(deps: Pick<Deps, 'tokens' | 'clock'>): RouteHandler<typeof create, ApiEnv> {
  return async (c) => {
    const { tenantId, label } = c.req.valid('json');
    for (let attempt = 0; attempt < 3; attempt++) {
      const { tokenId, token, tokenHash } = mintToken();
      const record: TokenRecord = { tokenId, tokenHash, tenantId, label, createdAt: new Date(deps.clock()).toISOString() };
      if (await deps.tokens.create(record)) return c.json({ ...view(record), token }, 201);
    }
    throw new SystemError('Could not draw an unused token id three times in a row.');
  };
}

function view(record: TokenRecord): z.infer<typeof tokenView> {
  return {
    tokenId: record.tokenId,
    tenantId: record.tenantId,
    label: record.label,
    createdAt: record.createdAt,
    lastUsedAt: record.lastUsedAt ?? null,
    revokedAt: record.revokedAt ?? null,
  };
}
