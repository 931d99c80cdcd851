import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { diffManifests, type Manifest, type ManifestEntry } from './manifest.ts';
import type { RemoteWorkspace } from './remote-workspace.ts';

interface FileStat {
  size: number;
  mtimeMs: number;
  mode: number;
}

/** What the runner knows about its local copy: the version it matches and each file's stat. */
interface LocalState {
  version: number;
  entries: Record<string, ManifestEntry>;
  stats: Record<string, FileStat>;
}

export interface PublishOutcome {
  version: number;
  changedPaths: number;
  bytesUploaded: number;
}

const DOWNLOAD_CONCURRENCY = 16;

/**
 * The runner's warm copy of one workspace: `{dir}/tree` is what commands see as /workspace,
 * `{dir}/state.json` records the version it matches. The state file is removed before any
 * command may touch the tree and rewritten only after a successful publish, so a crash or a
 * failed publish makes the next call rescan instead of trusting a stale record.
 */
export class LocalCopy {
  readonly tree: string;
  private readonly stateFile: string;

  constructor(readonly dir: string) {
    this.tree = path.join(dir, 'tree');
    this.stateFile = path.join(dir, 'state.json');
  }

  /** Brings the tree to `version`, moving only what differs. Returns the number of paths written or removed. */
  async materialize(remote: RemoteWorkspace, version: number): Promise<number> {
    const known = await this.readState();
    if (known && known.version === version) return 0;
    await fs.mkdir(this.tree, { recursive: true });
    const actual = await this.scan(known);
    const target: Manifest = version === 0 ? { version: 0, createdAt: '', entries: {} } : await remote.getManifest(version);
    const { upserts, deletes } = diffManifests(actual.entries, target.entries);

    // Deepest first, so a directory is empty before it goes.
    for (const p of deletes.sort((a, b) => b.length - a.length)) {
      await fs.rm(path.join(this.tree, p), { recursive: true, force: true });
    }
    const dirs = upserts.filter(([, e]) => e.type === 'dir').sort(([a], [b]) => a.length - b.length);
    for (const [p, e] of dirs) {
      await fs.mkdir(path.join(this.tree, p), { recursive: true });
      await fs.chmod(path.join(this.tree, p), (e as { mode: number }).mode);
    }
    const others = upserts.filter(([, e]) => e.type !== 'dir');
    await forEachConcurrent(others, DOWNLOAD_CONCURRENCY, async ([p, entry]) => {
      const real = path.join(this.tree, p);
      await fs.mkdir(path.dirname(real), { recursive: true });
      await fs.rm(real, { recursive: true, force: true });
      if (entry.type === 'symlink') {
        await fs.symlink(entry.target, real);
      } else if (entry.type === 'file') {
        const body = await remote.getBlob(entry.sha256);
        await fs.writeFile(real, body, { mode: entry.mode });
        await fs.chmod(real, entry.mode);
      }
    });
    const stats = await this.statEntries(target.entries);
    await this.writeState({ version, entries: target.entries, stats });
    return upserts.length + deletes.length;
  }

  /** Marks the copy as possibly diverged from its recorded version (called before commands run). */
  async markDirty(): Promise<LocalState | undefined> {
    const state = await this.readState();
    await fs.rm(this.stateFile, { force: true });
    return state;
  }

  /**
   * Finds what changed since `base` (size/mtime/mode first; only candidates are hashed) and, if
   * anything did, uploads the new blobs and publishes version base+1. A concurrent publisher
   * makes this throw WorkspaceConflictError.
   */
  async publish(remote: RemoteWorkspace, base: LocalState): Promise<PublishOutcome> {
    const scanned = await this.scan(base);
    const { upserts, deletes } = diffManifests(base.entries, scanned.entries);
    if (upserts.length === 0 && deletes.length === 0) {
      await this.writeState({ ...scanned, version: base.version });
      return { version: base.version, changedPaths: 0, bytesUploaded: 0 };
    }
    let bytesUploaded = 0;
    await forEachConcurrent(upserts, DOWNLOAD_CONCURRENCY, async ([p, entry]) => {
      if (entry.type !== 'file') return;
      const body = await fs.readFile(path.join(this.tree, p));
      bytesUploaded += await remote.putBlob(entry.sha256, body);
    });
    const version = base.version + 1;
    bytesUploaded += await remote.putManifest({ version, createdAt: new Date().toISOString(), entries: scanned.entries });
    await this.writeState({ ...scanned, version });
    return { version, changedPaths: upserts.length + deletes.length, bytesUploaded };
  }

  /** The tree as it is now, reusing known hashes where size, mtime and mode are unchanged. */
  async scan(known?: LocalState): Promise<LocalState> {
    const entries: Record<string, ManifestEntry> = {};
    const stats: Record<string, FileStat> = {};
    const walk = async (relDir: string): Promise<void> => {
      let names: string[];
      try {
        names = await fs.readdir(path.join(this.tree, relDir));
      } catch {
        return;
      }
      for (const name of names.sort()) {
        const rel = relDir ? `${relDir}/${name}` : name;
        const real = path.join(this.tree, rel);
        const st = await fs.lstat(real);
        const mode = st.mode & 0o7777;
        if (st.isSymbolicLink()) {
          entries[rel] = { type: 'symlink', target: await fs.readlink(real) };
        } else if (st.isDirectory()) {
          entries[rel] = { type: 'dir', mode };
          await walk(rel);
        } else if (st.isFile()) {
          const stat = { size: st.size, mtimeMs: st.mtimeMs, mode };
          const prevStat = known?.stats[rel];
          const prevEntry = known?.entries[rel];
          const unchanged =
            prevEntry?.type === 'file' && prevStat && prevStat.size === stat.size && prevStat.mtimeMs === stat.mtimeMs && prevStat.mode === mode;
          const sha256 = unchanged ? prevEntry.sha256 : await hashFile(real);
          entries[rel] = { type: 'file', sha256, size: st.size, mode };
          stats[rel] = stat;
        }
        // Sockets, fifos and devices are not workspace content.
      }
    };
    await walk('');
    return { version: known?.version ?? 0, entries, stats };
  }

  private async statEntries(entries: Record<string, ManifestEntry>): Promise<Record<string, FileStat>> {
    const stats: Record<string, FileStat> = {};
    for (const [p, e] of Object.entries(entries)) {
      if (e.type !== 'file') continue;
      const st = await fs.lstat(path.join(this.tree, p));
      stats[p] = { size: st.size, mtimeMs: st.mtimeMs, mode: st.mode & 0o7777 };
    }
    return stats;
  }

  async readState(): Promise<LocalState | undefined> {
    try {
      return JSON.parse(await fs.readFile(this.stateFile, 'utf8')) as LocalState;
    } catch {
      return undefined;
    }
  }

  private async writeState(state: LocalState): Promise<void> {
    const tmp = `${this.stateFile}.tmp`;
    await fs.writeFile(tmp, JSON.stringify(state));
    await fs.rename(tmp, this.stateFile);
  }
}

async function hashFile(file: string): Promise<string> {
  return createHash('sha256').update(await fs.readFile(file)).digest('hex');
}

async function forEachConcurrent<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await fn(items[next++]!);
  });
  await Promise.all(workers);
}
