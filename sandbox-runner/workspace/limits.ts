import { totals, type Entries } from './manifest.ts';

export interface WorkspaceLimits {
  /** Total bytes of file content. */
  maxBytes: number;
  maxFiles: number;
  /** Largest single file. */
  maxFileBytes: number;
}

export const DEFAULT_WORKSPACE_LIMITS: WorkspaceLimits = {
  maxBytes: 2 * 1024 * 1024 * 1024,
  maxFiles: 50_000,
  maxFileBytes: 512 * 1024 * 1024,
};

/** A workspace would pass one of its limits; nothing was saved. */
export class WorkspaceLimitError extends Error {
  override name = 'WorkspaceLimitError';
}

/** Throws a WorkspaceLimitError naming the first limit `entries` passes. */
export function checkLimits(entries: Entries, limits: WorkspaceLimits): void {
  const { files, bytes } = totals(entries);
  if (files > limits.maxFiles) {
    throw new WorkspaceLimitError(`The workspace would hold ${files} files, more than the limit of ${limits.maxFiles}. Remove files and retry; nothing was saved.`);
  }
  if (bytes > limits.maxBytes) {
    throw new WorkspaceLimitError(`The workspace would hold ${bytes} bytes, more than the limit of ${limits.maxBytes}. Remove files and retry; nothing was saved.`);
  }
  for (const [p, e] of Object.entries(entries)) {
    if (e.type === 'file' && e.size > limits.maxFileBytes) {
      throw new WorkspaceLimitError(`The file ${p} is ${e.size} bytes, more than the single-file limit of ${limits.maxFileBytes}. Remove or shrink it and retry; nothing was saved.`);
    }
  }
}
