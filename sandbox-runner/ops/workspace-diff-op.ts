import { z } from 'zod';
import { classifyChanges, isText, type FileChange } from '../workspace/file-changes.ts';
import type { Entries } from '../workspace/manifest.ts';
import { ToolInputError } from '../workspace/tool-input-error.ts';
import { readVersionPair, type VersionPair } from '../workspace/version-pair.ts';
import { defineOp } from './op.ts';

export type { FileChange } from '../workspace/file-changes.ts';

export interface WorkspaceDiffResult {
  type: 'workspace_diff';
  from: number;
  to: number;
  /** Changed files and links by path; at most `maxFiles` of them (then `truncated`). */
  files: FileChange[];
  /** How many paths changed in all. */
  totalFiles: number;
  /** Bytes of unified diff text in `files`. */
  diffBytes: number;
  /** Some changed paths were left out (`totalFiles` > `files.length`), or some diffs for the size cap (`skipped: 'size_cap'`). */
  truncated: boolean;
}

/** The most changed paths listed in one answer (each is a few hundred bytes without its diff). */
export const MAX_DIFF_FILES = 1_000;
/** Unified diff text in one answer: well inside Lambda's 6 MB response, and more than a person reads. */
export const MAX_DIFF_BYTES = 1024 * 1024;
/** A side larger than this is not diffed (a generated file, a data dump). */
export const MAX_DIFF_FILE_BYTES = 512 * 1024;
/** Myers' diff costs O(N·D): give up past this many edits or this long, and say so. */
const MAX_EDIT_LENGTH = 10_000;
const DIFF_TIMEOUT_MS = 2_000;
const CONCURRENCY = 8;

/**
 * What changed between two versions of the workspace (from ≤ to ≤ the request's version): per
 * path the kind of change, and a unified diff for a text file's content. Read-only: both versions
 * come from S3 (the warm copy serves `to` when it is there), so asking for an old turn's diff does
 * not move the copy the next tool call works on.
 */
export const workspaceDiffOp = defineOp({
  schema: z.object({
    type: z.literal('workspace_diff'),
    from: z.number().int().nonnegative(),
    to: z.number().int().nonnegative(),
    /** Only these paths (a client fetching the diffs a capped answer left out). */
    paths: z.array(z.string()).max(MAX_DIFF_FILES).optional(),
  }),
  mutatesWorkspace: false,
  async run(ctx, op) {
    const current = ctx.request.workspace.version;
    if (op.from > op.to || op.to > current) {
      throw new ToolInputError(`Versions must satisfy from ≤ to ≤ ${current} (the workspace's version); got from ${op.from}, to ${op.to}.`);
    }
    const state = await ctx.local.readState();
    const pair = await readVersionPair(ctx.remote, op.from, op.to, state ? { state, tree: ctx.paths.root } : undefined);
    let changes = classifyChanges(pair.from, pair.to);
    if (op.paths) {
      const wanted = new Set(op.paths);
      changes = changes.filter((c) => wanted.has(c.path));
    }
    const files = changes.slice(0, MAX_DIFF_FILES);
    const { diffBytes, capped } = await addDiffs(files, pair);
    const result: WorkspaceDiffResult = {
      type: 'workspace_diff',
      from: op.from,
      to: op.to,
      files,
      totalFiles: changes.length,
      diffBytes,
      truncated: capped || changes.length > files.length,
    };
    return { result };
  },
});

/** Fills in each file's diff in path order until the byte cap; later ones get `skipped: 'size_cap'`. */
async function addDiffs(files: FileChange[], pair: VersionPair): Promise<{ diffBytes: number; capped: boolean }> {
  const { createTwoFilesPatchParts } = await diffLibrary();
  let diffBytes = 0;
  let capped = false;
  for (let i = 0; i < files.length; i += CONCURRENCY) {
    const batch = files.slice(i, i + CONCURRENCY);
    const texts = await Promise.all(batch.map((f) => (capped ? undefined : diffOf(f, pair, createTwoFilesPatchParts))));
    batch.forEach((file, j) => {
      const text = texts[j];
      if (!text) return;
      if (capped || diffBytes + Buffer.byteLength(text.diff) > MAX_DIFF_BYTES) {
        capped = true;
        file.skipped = 'size_cap';
        return;
      }
      diffBytes += Buffer.byteLength(text.diff);
      Object.assign(file, text);
    });
    if (capped) for (const file of files.slice(i + CONCURRENCY)) if (wantsDiff(file)) file.skipped = 'size_cap';
    if (capped) break;
  }
  return { diffBytes, capped };
}

const wantsDiff = (f: FileChange) => f.kind === 'added' || f.kind === 'deleted' || f.kind === 'modified';

type PatchParts = (oldName: string, newName: string, oldText: string, newText: string) => { diff: string; additions: number; deletions: number } | undefined;

/** The diff's text, or undefined with `file.skipped` set (binary, too large, not found, too complex). */
async function diffOf(file: FileChange, pair: VersionPair, patch: PatchParts): Promise<{ diff: string; additions: number; deletions: number } | undefined> {
  if (!wantsDiff(file)) return undefined;
  const oldEntry = fileEntry(pair.from, file.path);
  const newEntry = fileEntry(pair.to, file.path);
  if (!oldEntry && !newEntry) return undefined;
  if ((oldEntry?.size ?? 0) > MAX_DIFF_FILE_BYTES || (newEntry?.size ?? 0) > MAX_DIFF_FILE_BYTES) {
    file.skipped = 'too_large';
    return undefined;
  }
  const [oldBody, newBody] = await Promise.all([
    oldEntry ? pair.body(oldEntry.sha256) : Buffer.alloc(0),
    newEntry ? pair.body(newEntry.sha256) : Buffer.alloc(0),
  ]);
  if (!oldBody || !newBody) {
    file.skipped = 'unavailable';
    return undefined;
  }
  if (!isText(oldBody) || !isText(newBody)) {
    file.skipped = 'binary';
    return undefined;
  }
  const parts = patch(oldEntry ? `a/${file.path}` : '/dev/null', newEntry ? `b/${file.path}` : '/dev/null', oldBody.toString('utf8'), newBody.toString('utf8'));
  if (!parts) file.skipped = 'too_complex';
  return parts;
}

function fileEntry(entries: Entries, p: string) {
  const e = entries[p];
  return e?.type === 'file' ? e : undefined;
}

/**
 * The `diff` package (jsdiff: Myers' line diff and unified-diff formatting), loaded on the first
 * diff: the runner's other ops never need it.
 */
async function diffLibrary(): Promise<{ createTwoFilesPatchParts: PatchParts }> {
  const { structuredPatch, formatPatch, FILE_HEADERS_ONLY } = await import('diff');
  return {
    createTwoFilesPatchParts(oldName, newName, oldText, newText) {
      const patch = structuredPatch(oldName, newName, oldText, newText, undefined, undefined, {
        context: 3,
        maxEditLength: MAX_EDIT_LENGTH,
        timeout: DIFF_TIMEOUT_MS,
      });
      if (!patch) return undefined;
      let additions = 0;
      let deletions = 0;
      for (const hunk of patch.hunks) {
        for (const line of hunk.lines) {
          if (line.startsWith('+')) additions += 1;
          else if (line.startsWith('-')) deletions += 1;
        }
      }
      return { diff: formatPatch(patch, FILE_HEADERS_ONLY), additions, deletions };
    },
  };
}
