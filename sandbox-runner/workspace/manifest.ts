/**
 * A workspace version is a manifest: every path with its kind, mode and (for files) the SHA-256
 * of its content, which names a content-addressed blob. Manifests are immutable and written
 * create-only, so two writers that start from the same version cannot both publish the next one.
 */
export type ManifestEntry =
  | { type: 'file'; sha256: string; size: number; mode: number }
  | { type: 'symlink'; target: string }
  | { type: 'dir'; mode: number };

export interface Manifest {
  version: number;
  createdAt: string;
  entries: Record<string, ManifestEntry>;
}

export const EMPTY_MANIFEST: Manifest = { version: 0, createdAt: new Date(0).toISOString(), entries: {} };

export interface ManifestDiff {
  /** Paths whose entry is new or differs. */
  upserts: [string, ManifestEntry][];
  deletes: string[];
}

export function diffManifests(from: Record<string, ManifestEntry>, to: Record<string, ManifestEntry>): ManifestDiff {
  const upserts: [string, ManifestEntry][] = [];
  const deletes: string[] = [];
  for (const [p, entry] of Object.entries(to)) {
    if (!sameEntry(from[p], entry)) upserts.push([p, entry]);
  }
  for (const p of Object.keys(from)) if (!(p in to)) deletes.push(p);
  return { upserts, deletes };
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
