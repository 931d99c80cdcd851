import { randomBytes } from 'node:crypto';

export type IdSource = (prefix: string) => string;

/**
 * Time-ordered ids (`ses_0mh2k3...`): a base36 millisecond timestamp padded to fixed width,
 * then random bytes, so ids sort by creation time in DynamoDB and in listings.
 */
export const createTimeOrderedId: IdSource = (prefix) => `${prefix}_${Date.now().toString(36).padStart(9, '0')}${randomBytes(8).toString('hex')}`;

/** The shape createTimeOrderedId gives: prefix, 9 base36 characters of time, 16 hex digits. */
const ID_BODY = /^[0-9a-z]{9}[0-9a-f]{16}$/;

/**
 * True when `value` could be an id with this prefix. Ids from a URL or a body are checked before
 * they reach a table: a hostile one (10 KB, NUL) is simply not found, instead of a key DynamoDB
 * refuses.
 */
export function isId(prefix: string, value: string): boolean {
  return value.startsWith(`${prefix}_`) && ID_BODY.test(value.slice(prefix.length + 1));
}

/** An id for a message: as given when short, cut otherwise (it may be 10 KB of anything). */
export function showId(value: string): string {
  return value.length > 64 ? `${value.slice(0, 64)}…` : value;
}
