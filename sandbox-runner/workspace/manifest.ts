import { keySyntaxProblem, showKey } from '../common/file-keys.ts';

/**
 * A workspace version is described by its entries: every path with its kind, mode and (for
 * files) the SHA-256 of its content. Versions are stored as deltas (what changed from the
 * previous version), written create-only so two writers that start from the same version cannot
 * both publish the next one, plus an occasional full snapshot so a cold reader never replays a
 * long chain.
 */
export type ManifestEntry = { type: 'file'; sha256: string; size: number; mode: number } | { type: 'symlink'; target: string } | { type: 'dir'; mode: number };

export type Entries = Record<string, ManifestEntry>;

/** Version `version`'s change from `version - 1`. */
export interface Delta {
  version: number;
  createdAt: string;
  upserts: Entries;
  deletes: string[];
  /** Set when this version was also written as a snapshot: the nonce naming the winning one. */
  snapshot?: string;
  /**
   * sha256 → base64 body of small files this version changed: they travel in the delta itself
   * (no blob is stored for them), so publishing a small edit is one request, not two.
   */
  bodies?: Record<string, string>;
}

/** The full state at `version`, with where each distinct body sits in the snapshot's pack. */
export interface SnapshotManifest {
  version: number;
  nonce: string;
  createdAt: string;
  entries: Entries;
  /** sha256 → [offset, size] in the pack object. */
  pack: Record<string, [number, number]>;
}

export interface ManifestDiff {
  /** Paths whose entry is new or differs. */
  upserts: [string, ManifestEntry][];
  deletes: string[];
}

export function diffManifests(from: Entries, to: Entries): ManifestDiff {
  const upserts: [string, ManifestEntry][] = [];
  const deletes: string[] = [];
  for (const [p, entry] of Object.entries(to)) {
    if (!sameEntry(from[p], entry)) upserts.push([p, entry]);
  }
  for (const p of Object.keys(from)) if (!(p in to)) deletes.push(p);
  return { upserts, deletes };
}

export function applyDelta(entries: Entries, delta: Pick<Delta, 'upserts' | 'deletes'>): Entries {
  const next = { ...entries };
  for (const p of delta.deletes) delete next[p];
  Object.assign(next, delta.upserts);
  return next;
}

export function sameEntry(a: ManifestEntry | undefined, b: ManifestEntry | undefined): boolean {
  if (!a || !b || a.type !== b.type) return false;
  switch (a.type) {
    case 'file':
      return b.type === 'file' && a.sha256 === b.sha256 && a.mode === b.mode;
    case 'symlink':
      return b.type === 'symlink' && a.target === b.target;
    case 'dir':
      return b.type === 'dir' && a.mode === b.mode;
  }
}

export function totals(entries: Entries): { files: number; bytes: number } {
  let files = 0;
  let bytes = 0;
  for (const e of Object.values(entries)) {
    if (e.type !== 'file') continue;
    files += 1;
    bytes += e.size;
  }
  return { files, bytes };
}

/**
 * Throws unless every path is a plain relative path whose every ancestor is a directory of the
 * same version. Versions come from S3, where anyone holding the session's credentials could
 * write; a crafted version must not make the runner write outside the tree or through a link.
 */
export function assertWellFormed(entries: Entries): void {
  for (const p of Object.keys(entries)) {
    if (keySyntaxProblem(p)) throw new Error(`invalid path ${showKey(p)}`);
    const parts = p.split('/');
    const e = entries[p]!;
    if (e.type === 'file' && !/^[0-9a-f]{64}$/.test(e.sha256)) throw new Error(`invalid content hash for "${p}"`);
    for (let i = 1; i < parts.length; i++) {
      const ancestor = parts.slice(0, i).join('/');
      if (entries[ancestor]?.type !== 'dir') throw new Error(`"${p}" lies under "${ancestor}", which is not a directory of this version`);
    }
  }
}
