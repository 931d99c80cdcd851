import type { Entries, ManifestEntry } from './manifest.ts';

/** What happened to one path between two versions (directories are not listed: their files are). */
export type ChangeKind =
  | 'added'
  | 'modified'
  | 'deleted'
  /** Same content, another mode (chmod +x). */
  | 'mode'
  /** A link's target changed, or a file became a link or a link a file. */
  | 'symlink';

/** Why a changed file carries no unified diff. */
export type SkipReason =
  /** Holds a NUL byte or is not UTF-8. */
  | 'binary'
  /** One side is over the per-file size limit. */
  | 'too_large'
  /** The line diff gave up (too many edits to compute quickly). */
  | 'too_complex'
  /** The response's total diff size was reached before this file. */
  | 'size_cap'
  /** A body could not be found in storage. */
  | 'unavailable';

export interface FileChange {
  path: string;
  kind: ChangeKind;
  oldMode?: number;
  newMode?: number;
  oldSize?: number;
  newSize?: number;
  oldTarget?: string;
  newTarget?: string;
  /** Lines added and removed (with `diff`). */
  additions?: number;
  deletions?: number;
  /** The unified diff (`--- a/…` `+++ b/…` and hunks), for a text file's content change. */
  diff?: string;
  skipped?: SkipReason;
}

type Leaf = Exclude<ManifestEntry, { type: 'dir' }>;
const leaf = (e: ManifestEntry | undefined): Leaf | undefined => (e && e.type !== 'dir' ? e : undefined);

/** Every changed file or link between two versions' entries, by path, without content. */
export function classifyChanges(from: Entries, to: Entries): FileChange[] {
  const paths = new Set([...Object.keys(from), ...Object.keys(to)]);
  const changes: FileChange[] = [];
  for (const p of [...paths].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))) {
    const a = leaf(from[p]);
    const b = leaf(to[p]);
    const change = classify(p, a, b);
    if (change) changes.push(change);
  }
  return changes;
}

function classify(p: string, a: Leaf | undefined, b: Leaf | undefined): FileChange | undefined {
  if (!a && !b) return undefined;
  const sides = { ...describe('old', a), ...describe('new', b) };
  if (!a) return { path: p, kind: 'added', ...sides };
  if (!b) return { path: p, kind: 'deleted', ...sides };
  if (a.type === 'symlink' || b.type === 'symlink') {
    if (a.type === 'symlink' && b.type === 'symlink' && a.target === b.target) return undefined;
    return { path: p, kind: 'symlink', ...sides };
  }
  if (a.sha256 !== b.sha256) return { path: p, kind: 'modified', ...sides };
  if (a.mode !== b.mode) return { path: p, kind: 'mode', ...sides };
  return undefined;
}

function describe(side: 'old' | 'new', e: Leaf | undefined): Partial<FileChange> {
  if (!e) return {};
  if (e.type === 'symlink') return { [`${side}Target`]: e.target };
  return { [`${side}Mode`]: e.mode, [`${side}Size`]: e.size };
}

/** Whether a body is text worth a line diff: UTF-8 without NUL bytes (git looks for NUL too). */
export function isText(body: Buffer): boolean {
  if (body.includes(0)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(body);
    return true;
  } catch {
    return false;
  }
}
