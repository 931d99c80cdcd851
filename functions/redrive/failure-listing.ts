import { createHash } from 'node:crypto';
import type { Deps } from '../deps/deps.ts';
import { UserError } from '../shared/errors.ts';
import type { FailedInvocation, HeldFailure } from '../stores/failed-invocations.ts';

/** How long a read keeps records from other reads while it works through them. */
export const HOLD_SECONDS = 30;
/** Receives one call makes at most (of 10 records each): a call's work stays bounded on a long queue. */
const MAX_RECEIVES = 20;
/** The most records one listing can page through: each one seen costs its cursor 4 bytes. */
export const MAX_LISTED = 1_500;

/**
 * Pages through the failed invocations. The queue has no order and no offsets, so a page is what
 * a few receives return that earlier pages did not (the cursor carries a short hash of each id
 * already listed); the records read are released at once, so a listing never hides them from a
 * redrive.
 */
export async function listFailedInvocations(
  deps: Pick<Deps, 'failedInvocations'>,
  opts: { limit: number; cursor?: string },
): Promise<{ failures: FailedInvocation[]; nextCursor: string | null }> {
  const seen = opts.cursor ? decodeSeen(opts.cursor) : new Set<string>();
  const held: HeldFailure[] = [];
  const page: FailedInvocation[] = [];
  let exhausted = false;
  try {
    for (let i = 0; i < MAX_RECEIVES && page.length < opts.limit; i++) {
      const batch = await deps.failedInvocations.receive(10, HOLD_SECONDS);
      if (batch.length === 0) {
        exhausted = true;
        break;
      }
      held.push(...batch);
      for (const { receipt: _receipt, ...failure } of batch) {
        if (page.length < opts.limit && !seen.has(shortHash(failure.id))) page.push(failure);
      }
    }
  } finally {
    await deps.failedInvocations.release(held.map((h) => h.receipt));
  }
  for (const f of page) seen.add(shortHash(f.id));
  const more = !exhausted && page.length > 0 && seen.size < MAX_LISTED;
  return { failures: page, nextCursor: more ? encodeSeen(seen) : null };
}

const shortHash = (id: string) => createHash('sha256').update(id).digest('hex').slice(0, 8);

function encodeSeen(seen: Set<string>): string {
  return Buffer.from([...seen].join(''), 'hex').toString('base64url');
}

function decodeSeen(cursor: string): Set<string> {
  const hex = /^[A-Za-z0-9_-]{1,8200}$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('hex') : '';
  if (!hex || hex.length % 8 !== 0) {
    throw new UserError('Invalid "cursor": pass the nextCursor value from the previous page of the same listing unchanged.', 'invalid_cursor');
  }
  return new Set(hex.match(/.{8}/g));
}
