import { z } from 'zod';
import { UserError } from '../shared/errors.ts';

/**
 * Pagination cursors: DynamoDB's LastEvaluatedKey as base64url JSON. A cursor comes back from the
 * caller, so it is decoded strictly: it must be the exact key shape of the listing it is used
 * with and belong to the same tenant or session (`scope`). Anything else is a 400
 * `invalid_cursor`, never a DynamoDB ValidationException. A well-formed cursor the caller wrote
 * by hand only moves where their own listing starts: the query's key condition still limits the
 * page to their tenant or session.
 */
export type Cursor = Record<string, string | number>;

/** Longer than any key we hand out (ids, an ISO time and a tenant name, as JSON, in base64). */
export const MAX_CURSOR_CHARS = 2_048;

export function encodeCursor(key: Record<string, unknown>): string {
  return Buffer.from(JSON.stringify(key)).toString('base64url');
}

/** The start key of a listing, or a UserError when `cursor` is not one of its own cursors. */
export function decodeCursor<S extends z.ZodType<Cursor>>(cursor: string, shape: S, scope: Partial<z.output<S>>): z.output<S> {
  const key = parse(cursor, shape);
  if (!key || Object.entries(scope).some(([name, value]) => key[name] !== value)) throw invalidCursor();
  return key;
}

function parse<S extends z.ZodType<Cursor>>(cursor: string, shape: S): z.output<S> | undefined {
  if (cursor.length > MAX_CURSOR_CHARS || !/^[A-Za-z0-9_-]+$/.test(cursor)) return undefined;
  try {
    const parsed = shape.safeParse(JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

function invalidCursor(): UserError {
  return new UserError('Invalid "cursor": pass the nextCursor value from the previous page of the same listing unchanged.', 'invalid_cursor');
}

/** A string attribute of a key, as long as any we write. */
export const keyString = z.string().min(1).max(512);
