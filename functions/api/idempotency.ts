import { createHash } from 'node:crypto';
import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import type { Deps } from '../deps/deps.ts';
import { ConflictError, StratusError, UserError } from '../shared/errors.ts';
import type { StoredResponse } from '../stores/idempotency-store.ts';
import type { AuthVariables } from './auth.ts';

/** Largest response body kept in the DynamoDB item; larger ones go to S3 (items hold at most 400 KB). */
const MAX_INLINE_BODY_BYTES = 300_000;
/** How long a retry waits for the first request with the same key before answering 409. */
const WAIT_FOR_FIRST_MS = 5_000;
const WAIT_POLL_MS = 200;
/** Response headers that belong to the first answer and are replayed with it. */
const REPLAYED_HEADERS = ['content-type', 'location', 'content-location', 'retry-after', 'preference-applied'];

export type IdempotencyDeps = Pick<Deps, 'idempotency' | 'blobs' | 'clock' | 'newId' | 'log'>;

/**
 * `Idempotency-Key` on creating POSTs: the first request with a key claims it with a conditional
 * write and its response is stored (24 h); a retry with the same key and the same request (method,
 * path, body) gets that response again (`Idempotent-Replayed: true`) — it never runs twice, so a
 * client that retries after a timeout never starts a second turn. The same key with another
 * request is a 422. A retry that arrives while the first still runs waits a few seconds for it,
 * then gets 409 `idempotency_in_progress` with `Retry-After`. Answers a retry could change (5xx,
 * 409, 429) are not kept: the key is free again. A streamed answer (SSE) is replayed by following
 * the same turn's events (`followStream`, from its `Content-Location`).
 */
export function idempotency(deps: IdempotencyDeps, opts: { followStream: (c: Context, url: string) => Promise<Response> }) {
  return createMiddleware<{ Variables: AuthVariables }>(async (c, next) => {
    const key = c.req.header('idempotency-key');
    if (c.req.method !== 'POST' || key === undefined) return next();
    if (!/^[\x21-\x7e]{1,255}$/.test(key)) throw new UserError('Idempotency-Key must be 1 to 255 visible ASCII characters.');
    const body = await readBody(c);
    // The handler reads the body again from the request.
    c.req.raw = new Request(c.req.raw, { body });
    const requestHash = createHash('sha256').update(`${c.req.method}\n${c.req.path}\n`).update(body).digest('hex');
    const scopedKey = `${c.get('tenantId')}/${key}`;
    const claimId = deps.newId('idem');
    const claim = await deps.idempotency.claim({ scopedKey, requestHash, claimId, claimedAt: deps.clock() });
    if (!claim.claimed) {
      let existing = claim.existing;
      if (existing && existing.requestHash !== requestHash) throw reused();
      const until = deps.clock() + WAIT_FOR_FIRST_MS;
      while (existing?.state === 'pending' && deps.clock() < until) {
        await new Promise((r) => setTimeout(r, WAIT_POLL_MS));
        existing = await deps.idempotency.get(scopedKey);
      }
      if (existing?.state === 'done' && existing.response) return replay(c, deps, existing.response, opts);
      throw new ConflictError('A request with this Idempotency-Key is still running; retry later to get its response.', 'idempotency_in_progress', 1);
    }
    try {
      await next();
    } catch (err) {
      await deps.idempotency.release(scopedKey, claimId);
      throw err;
    }
    const res = c.res;
    if (res.status >= 500 || res.status === 409 || res.status === 429) {
      await deps.idempotency.release(scopedKey, claimId);
      return;
    }
    await deps.idempotency.complete(scopedKey, claimId, await storable(deps, res, claimId));
  });
}

function reused(): StratusError {
  return new StratusError('This Idempotency-Key was used with a different request (method, path or body); use a new key.', 422, 'idempotency_key_reused');
}

/** The request's body, whole: its size is capped as it arrives by the route's limit (body-limit.ts). */
async function readBody(c: Context): Promise<Uint8Array> {
  return new Uint8Array(await c.req.raw.arrayBuffer());
}

async function storable(deps: IdempotencyDeps, res: Response, claimId: string): Promise<StoredResponse> {
  const headers: Record<string, string> = {};
  for (const name of REPLAYED_HEADERS) {
    const value = res.headers.get(name);
    if (value !== null) headers[name] = value;
  }
  if ((headers['content-type'] ?? '').includes('text/event-stream')) {
    return { status: res.status, headers, ...(headers['content-location'] ? { followUrl: headers['content-location'] } : {}) };
  }
  const text = await res.clone().text();
  if (Buffer.byteLength(text) <= MAX_INLINE_BODY_BYTES) return { status: res.status, headers, body: text };
  const bodyKey = `spill/idempotency/${claimId}.body`;
  await deps.blobs.putIfAbsent(bodyKey, text, headers['content-type']);
  return { status: res.status, headers, bodyKey };
}

async function replay(
  c: Context,
  deps: IdempotencyDeps,
  stored: StoredResponse,
  opts: { followStream: (c: Context, url: string) => Promise<Response> },
): Promise<Response> {
  if (stored.followUrl) {
    const followed = await opts.followStream(c, stored.followUrl);
    const res = new Response(followed.body, followed);
    res.headers.set('Idempotent-Replayed', 'true');
    return res;
  }
  const body = stored.bodyKey ? await deps.blobs.get(stored.bodyKey) : stored.body;
  const headers = new Headers(stored.headers);
  headers.set('Idempotent-Replayed', 'true');
  return new Response(body ?? null, { status: stored.status, headers });
}
