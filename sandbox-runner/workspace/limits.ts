import type { WorkspaceLimits } from '../common/workspace-limits.ts';
import { totals, type Entries } from './manifest.ts';

/**
 * A workspace would pass one of its limits; nothing was saved. It leaves the runner as the wire
 * code `limit` (runner.ts), which the harness decodes into its own WorkspaceLimitError
 * (functions/runner-client/runner-errors.ts).
 */
export class LimitExceededError extends Error {
  override name = 'LimitExceededError';
}

/** Throws a LimitExceededError naming the first limit `entries` passes. */
export function checkLimits(entries: Entries, limits: WorkspaceLimits): void {
  const { files, bytes } = totals(entries);
  if (files > limits.maxFiles) {
    throw new LimitExceededError(
      `The workspace would hold ${files} files, more than the limit of ${limits.maxFiles}. Remove files and retry; nothing was saved.`,
    );
  }
  if (bytes > limits.maxBytes) {
    throw new LimitExceededError(
      `The workspace would hold ${bytes} bytes, more than the limit of ${limits.maxBytes}. Remove files and retry; nothing was saved.`,
    );
  }
  for (const [p, e] of Object.entries(entries)) {
    if (e.type === 'file' && e.size > limits.maxFileBytes) {
      throw new LimitExceededError(
        `The file ${p} is ${e.size} bytes, more than the single-file limit of ${limits.maxFileBytes}. Remove or shrink it and retry; nothing was saved.`,
      );
    }
  }
}
