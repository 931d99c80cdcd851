import type { Context } from 'hono';
import type { z } from 'zod';
import { UserError } from '../shared/errors.ts';

/** Parses a JSON body with a zod schema; failures become 400s that name the field. */
export async function parseJsonBody<S extends z.ZodType>(c: Context, schema: S): Promise<z.output<S>> {
  let body: unknown;
  try {
    const text = await c.req.text();
    body = text.trim() === '' ? {} : JSON.parse(text);
  } catch {
    throw new UserError('Request body must be valid JSON.');
  }
  return parseWith(schema, body, 'body');
}

export function parseWith<S extends z.ZodType>(schema: S, value: unknown, where: string): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issues = result.error.issues.map((issue) => {
    const field = issue.path.length ? issue.path.join('.') : where;
    return `"${field}": ${issue.message}`;
  });
  throw new UserError(`Invalid ${where}: ${issues.join('; ')}`);
}
