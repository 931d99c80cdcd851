import type { Context } from 'hono';
import type { z } from 'zod';
import { hasLoneSurrogate } from '../../sandbox-runner/common/file-keys.ts';
import { UserError } from '../shared/errors.ts';

/**
 * Largest JSON body a route takes (routes that need less declare their own limit). Lambda refuses
 * requests over 6 MB before they reach us; the local stack has no such front, so this keeps one
 * request from filling the process's memory.
 */
export const MAX_JSON_BODY_BYTES = 16 * 1024 * 1024;

/**
 * Deepest nesting accepted. Bodies are stored as DynamoDB items, which allow 32 levels; a body
 * past this could only fail there.
 */
export const MAX_JSON_DEPTH = 16;

/**
 * Reads a JSON body (its size is capped as it arrives by the app's body-limit layer,
 * body-limit.ts) and checks it is plain JSON: UTF-8 (no replacement
 * characters slipped in), every string well-formed Unicode, nested at most MAX_JSON_DEPTH deep.
 * An empty body reads as `{}`. The zod schema is applied by the route's validator.
 */
export async function readJsonBody(c: Context): Promise<{ text: string; value: unknown }> {
  const text = await readUtf8Body(c);
  if (text.trim() === '') return { text: '{}', value: {} };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new UserError('Request body must be valid JSON.');
  }
  assertPlainJson(value);
  return { text, value };
}

async function readUtf8Body(c: Context): Promise<string> {
  // Off the raw request, not through hono's body cache: the text checked here is what
  // jsonBodyLimit puts in that cache for the validator, and the first cached form is what it reads.
  const bytes = new Uint8Array(await c.req.raw.arrayBuffer());
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new UserError('Request body must be UTF-8 encoded JSON.');
  }
}

/** Refuses strings with unpaired surrogates (valid JSON escapes, invalid text) and deep nesting. */
function assertPlainJson(body: unknown): void {
  const stack: [unknown, string, number][] = [[body, 'body', 0]];
  while (stack.length > 0) {
    const [value, where, depth] = stack.pop()!;
    if (typeof value === 'string') {
      if (hasLoneSurrogate(value)) throw new UserError(`Invalid body: "${cut(where)}" is not well-formed Unicode (an unpaired surrogate).`);
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (depth >= MAX_JSON_DEPTH) throw new UserError(`Invalid body: it is nested more than ${MAX_JSON_DEPTH} levels deep.`);
    for (const [key, item] of Object.entries(value)) {
      const path = where === 'body' ? key : `${where}.${key}`;
      if (hasLoneSurrogate(key)) throw new UserError(`Invalid body: a key in "${cut(where)}" is not well-formed Unicode (an unpaired surrogate).`);
      stack.push([item, path, depth + 1]);
    }
  }
}

/** The 400 for failed validation: `Invalid body: "field": problem; …` (at most five issues named). */
export function invalidInput(zodIssues: readonly z.core.$ZodIssue[], where: string): UserError {
  const issues = zodIssues.map((issue) => {
    const field = issue.path.length ? issue.path.join('.') : where;
    return `"${cut(field)}": ${issue.message}`;
  });
  const more = issues.length > 5 ? `; and ${issues.length - 5} more` : '';
  return new UserError(`Invalid ${where}: ${issues.slice(0, 5).join('; ')}${more}`);
}

/** A field path for a message: record keys come from the caller and may be kilobytes long. */
function cut(field: string): string {
  return field.length > 120 ? `${field.slice(0, 120)}…` : field;
}
