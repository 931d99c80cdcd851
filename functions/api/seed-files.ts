import { z } from 'zod';
import { seedFilesProblem, type SeedContent } from '../../sandbox-runner/common/file-keys.ts';
import { LimitError, UserError } from '../shared/errors.ts';

/** Seed files in a body: relative path → UTF-8 text, or `{ base64 }` for binary. */
export const seedFilesSchema = z
  .record(z.string(), z.union([z.string(), z.strictObject({ base64: z.string() })]))
  .describe('Seed files: relative path → text, or { base64 } for binary');

/**
 * Refuses seed files the runner would refuse, with the runner's own rules (file-keys.ts), before
 * anything is stored: 400 for a bad path or content, 413 naming the limit for too many or too big.
 */
export function assertSeedFiles(files: Record<string, SeedContent> | undefined, field: string): void {
  if (!files) return;
  const problem = seedFilesProblem(files);
  if (!problem) return;
  if (problem.kind === 'too_large') throw new LimitError(problem.message, 'request_too_large');
  throw new UserError(`Invalid body: "${field}": ${problem.message}`);
}
