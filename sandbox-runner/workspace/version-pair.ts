import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fetchDeltas, type LocalState } from './local-copy.ts';
import { applyDelta, assertWellFormed, type Delta, type Entries, type SnapshotManifest } from './manifest.ts';
import { isNotFound, WorkspaceMissingError, type RemoteWorkspace } from './remote-workspace.ts';

/**
 * Two versions of a workspace, read from S3 without materialising either: a diff of an earlier
 * turn must not move the warm copy (the next tool call would then rebuild it twice).
 */
export interface VersionPair {
  from: Entries;
  to: Entries;
  /** The bytes with this SHA-256 as one of the two versions stored them; undefined when nothing holds them. */
  body(sha256: string): Promise<Buffer | undefined>;
}

/** The warm copy, when it is at one of the two versions: its files are read from disk. */
export interface LocalSide {
  state: LocalState;
  tree: string;
}

/** `to` this close to `from` is folded from `from`'s entries; further on, from its own snapshot. */
const MAX_FOLD = 64;

/**
 * Entries at `from` and `to` (from ≤ to), each from the newest snapshot at or below it plus the
 * deltas after it (or the warm copy's record when it is at `to`). A body is looked for where the
 * versions keep it: inside a delta that was read anyway, in the warm tree, as a blob, or in a
 * snapshot's pack (one range GET), each checked against its hash.
 */
export async function readVersionPair(remote: RemoteWorkspace, from: number, to: number, local?: LocalSide): Promise<VersionPair> {
  const read: ReadSoFar = { deltas: [], snapshots: [] };
  const fromEntries = await entriesAt(remote, from, read);
  const warm = local && local.state.version === to ? local : undefined;
  let toEntries: Entries;
  if (warm) toEntries = warm.state.entries;
  else if (to === from) toEntries = fromEntries;
  else if (to - from <= MAX_FOLD) {
    const chain = await fetchDeltas(remote, from + 1, to);
    read.deltas.push(...chain);
    toEntries = checked(remote, to, chain.reduce(applyDelta, fromEntries));
  } else toEntries = await entriesAt(remote, to, read);
  return { from: fromEntries, to: toEntries, body: bodyFinder(remote, read, warm) };
}

/** The deltas and snapshots read on the way: where bodies are looked for first. */
interface ReadSoFar {
  deltas: Delta[];
  snapshots: SnapshotManifest[];
}

async function entriesAt(remote: RemoteWorkspace, version: number, read: ReadSoFar): Promise<Entries> {
  if (version === 0) return {};
  const snapshot = await remote.latestSnapshot(version);
  if (snapshot) read.snapshots.push(snapshot);
  const chain = await fetchDeltas(remote, (snapshot?.version ?? 0) + 1, version);
  read.deltas.push(...chain);
  return checked(remote, version, chain.reduce(applyDelta, snapshot?.entries ?? {}));
}

function bodyFinder(remote: RemoteWorkspace, read: ReadSoFar, warm: LocalSide | undefined): VersionPair['body'] {
  const inline = new Map<string, string>();
  for (const d of read.deltas) for (const [sha, base64] of Object.entries(d.bodies ?? {})) inline.set(sha, base64);
  const onDisk = new Map<string, string>();
  for (const [p, e] of Object.entries(warm?.state.entries ?? {})) if (e.type === 'file') onDisk.set(e.sha256, p);
  const sources: ((sha: string) => Promise<Buffer | undefined>)[] = [
    async (sha) => (inline.has(sha) ? Buffer.from(inline.get(sha)!, 'base64') : undefined),
    async (sha) => (warm && onDisk.has(sha) ? fs.readFile(path.join(warm.tree, onDisk.get(sha)!)).catch(() => undefined) : undefined),
    async (sha) => {
      const snapshot = read.snapshots.find((s) => s.pack[sha]);
      if (!snapshot) return undefined;
      const [offset, size] = snapshot.pack[sha]!;
      return remote.getRange(remote.packKey(snapshot), offset, size);
    },
    (sha) => blobBody(remote, sha),
  ];
  return async (sha256) => {
    for (const source of sources) {
      const found = await source(sha256);
      // A body that does not match its hash (a crafted delta, a file rewritten since) is not used.
      if (found && createHash('sha256').update(found).digest('hex') === sha256) return found;
    }
    return undefined;
  };
}

async function blobBody(remote: RemoteWorkspace, sha256: string): Promise<Buffer | undefined> {
  try {
    const chunks: Buffer[] = [];
    for await (const chunk of await remote.getBlobStream(sha256)) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

function checked(remote: RemoteWorkspace, version: number, entries: Entries): Entries {
  try {
    assertWellFormed(entries);
  } catch (err) {
    throw new WorkspaceMissingError(`Workspace ${remote.id} version ${version} is malformed: ${(err as Error).message}.`);
  }
  return entries;
}
