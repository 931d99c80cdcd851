import { createHash } from 'node:crypto';
import { z } from 'zod';

/**
 * What the harness remembers about a file the model has read or written
 * (docs/tools.md, "The read-file state across stateless turns").
 * It lives in the session record, so it survives stateless turns. Staleness is decided by content
 * hash, not mtime: a runner that re-materialises the workspace gives files new mtimes without
 * anyone having changed them.
 */
export const fileStateEntrySchema = z.object({
  /** sha256 of the whole file's text, line endings normalised to LF. */
  hash: z.string(),
  /** Read's offset and limit; both absent after Write/Edit (the model knows the whole file). */
  offset: z.number().int().optional(),
  limit: z.number().int().optional(),
  /** Set when the model saw only an excerpt it did not ask for; such a file counts as not read. */
  isPartialView: z.boolean().optional(),
});

export type FileStateEntry = z.infer<typeof fileStateEntrySchema>;

export function hashText(text: string): string {
  return createHash('sha256').update(text).digest('base64url');
}
