import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, createReadStream, createWriteStream, lstatSync, promises as fs, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { WorkspaceLimits } from '../common/workspace-limits.ts';
import { checkLimits } from './limits.ts';
import { applyDelta, assertWellFormed, diffManifests, type Delta, type Entries, type ManifestEntry } from './manifest.ts';
import { extractPack, packStream, planPack } from './pack.ts';
import { isLayerDirectoryName } from '../common/environment-rules.ts';
import { removeLayer, restoreLayer, type LayerOutcome, type LayerState, type LayerTarget } from './environment-layer.ts';
import { WorkspaceMissingError, type RemoteWorkspace } from './remote-workspace.ts';
/** A file's manifest entry. */
type FileEntry = Extract<ManifestEntry, { type: 'file' }>;

interface FileStat {
  size: number;
  mtimeMs: number;
  mode: number;
}

/** What the runner knows about its local copy: the version it matches and each file's stat. */
export interface LocalState {
  version: number;
  entries: Entries;
  stats: Record<string, FileStat>;
  /** The newest snapshot in this version's history, and delta entries written since it. */
  snapshotVersion: number;
  entriesSinceSnapshot: number;
  /** The cached environment in the tree beside the workspace's files (environment-layer.ts). */
  layer?: LayerState;
}

export interface MaterializeOutcome {
  mode: 'warm' | 'incremental' | 'cold';
  /** Paths written or removed. */
  changedPaths: number;
}

export interface PublishOutcome {
  version: number;
  changedPaths: number;
  bytesUploaded: number;
}

const TRANSFER_CONCURRENCY = 16;
/** Changed files up to this size travel inside their version's delta instead of as blobs... */
const INLINE_BODY_BYTES = 16 * 1024;
/** ...up to this much in one delta (a delta is fetched whole by every reader catching up). */
const INLINE_DELTA_BYTES = 64 * 1024;
/**
 * File timestamps advance in kernel ticks (4–10 ms). A file modified within this window of being
 * recorded could change again in the same tick with the same size and be missed, so its stat is
 * not trusted next time (as git does with "racily clean" entries): it gets hashed again.
 */
const RACY_WINDOW_MS = 25;
/** A warm copy this many versions behind catches up by deltas; further behind it starts cold. */
const MAX_DELTA_CATCH_UP = 64;
/**
 * A snapshot is written when this many versions, or delta entries, piled up since the last one.
 * `everyEntries` is the ceiling; a smaller workspace snapshots sooner (a quarter of its entries,
 * at least SNAPSHOT_MIN_ENTRIES), since a cold reader fetches every body changed since the last
 * snapshot one GET at a time: a command that wrote 1,000 files would otherwise cost the next cold
 * start 1,000 requests.
 */
export interface SnapshotPolicy {
  everyVersions: number;
  everyEntries: number;
}
export const DEFAULT_SNAPSHOT_POLICY: SnapshotPolicy = { everyVersions: 64, everyEntries: 4_000 };
const SNAPSHOT_MIN_ENTRIES = 256;
const SNAPSHOT_ENTRIES_SHARE = 0.25;

function entriesBeforeSnapshot(policy: SnapshotPolicy, workspaceEntries: number): number {
  return Math.min(policy.everyEntries, Math.max(SNAPSHOT_MIN_ENTRIES, Math.ceil(workspaceEntries * SNAPSHOT_ENTRIES_SHARE)));
}

/**
 * The runner's warm copy of one workspace: `{dir}/tree` is what commands see as /workspace,
 * `{dir}/state.json` records the version it matches. The state file is removed before anything
 * may touch the tree and rewritten only once the tree is known to match a version, so a crash or
 * a failed publish makes the next call rebuild instead of trusting a stale record.
 */
export class LocalCopy {
  readonly tree: string;
  private readonly stateFile: string;
  private readonly dirtyFile: string;

  /** What materialising did about the request's environment layer; undefined without one. */
  layerOutcome: LayerOutcome | undefined;

  /**
   * @param cache the parsed state of warm copies, kept by a long-lived runner so a warm call does
   *   not re-read megabytes of JSON; safe to lose (the file is the record).
   * @param environment the session's cached environment: restored beside the workspace, and new
   *   dependency directories become part of it instead of the workspace (environment-layer.ts).
   */
  constructor(
    readonly dir: string,
    private readonly limits: WorkspaceLimits,
    private readonly cache: Map<string, LocalState> = new Map(),
    private readonly snapshots: SnapshotPolicy = DEFAULT_SNAPSHOT_POLICY,
    readonly environment?: LayerTarget,
  ) {
    this.tree = path.join(dir, 'tree');
    this.stateFile = path.join(dir, 'state.json');
    this.dirtyFile = path.join(dir, 'dirty');
  }

  /** Brings the tree to `version` (nothing moves when it is already there), then the request's environment layer. */
  async materialize(remote: RemoteWorkspace, version: number): Promise<MaterializeOutcome> {
    const outcome = await this.materializeVersion(remote, version);
    if (this.environment) await this.ensureLayer(this.environment);
    return outcome;
  }

  private async materializeVersion(remote: RemoteWorkspace, version: number): Promise<MaterializeOutcome> {
    const known = await this.readState();
    if (known && known.version === version) return { mode: 'warm', changedPaths: 0 };
    await this.forgetState();
    if (known && known.version >= 1 && version > known.version && version - known.version <= MAX_DELTA_CATCH_UP) {
      return { mode: 'incremental', changedPaths: await this.catchUp(remote, known, version) };
    }
    return { mode: 'cold', changedPaths: await this.rebuild(remote, version) };
  }

  /**
   * Makes the tree hold the layer `target` names: kept when it already does (a warm copy), else
   * another layer's roots are removed and the stored one is restored (one GET). A layer that is
   * not stored (yet) is recorded as collected: the set-up's new dependency directories become it.
   */
  private async ensureLayer(target: LayerTarget): Promise<void> {
    const state = (await this.readState())!;
    if (state.layer?.key === target.key) {
      this.layerOutcome = state.layer.source === 'restored' ? { status: 'present', roots: state.layer.roots } : { status: 'absent' };
      return;
    }
    if (state.layer) await removeLayer(this.tree, state.layer);
    const restored = await restoreLayer(this.dir, this.tree, target, state.entries);
    this.layerOutcome = restored.outcome;
    await this.writeState({ ...state, layer: restored.state });
  }

  private async catchUp(remote: RemoteWorkspace, known: LocalState, version: number): Promise<number> {
    const deltas = await fetchDeltas(remote, known.version + 1, version);
    let entries = known.entries;
    let { snapshotVersion, entriesSinceSnapshot } = known;
    for (const d of deltas) {
      entries = applyDelta(entries, d);
      if (d.snapshot) [snapshotVersion, entriesSinceSnapshot] = [d.version, 0];
      else entriesSinceSnapshot += Object.keys(d.upserts).length + d.deletes.length;
    }
    checkWellFormed(remote, version, entries);
    const { upserts, deletes } = diffManifests(known.entries, entries);
    for (const p of deletes.sort((a, b) => b.length - a.length)) await fs.rm(path.join(this.tree, p), { recursive: true, force: true });
    await this.writeEntries(remote, upserts, new Set(), inlineBodiesOf(deltas));
    await this.finish({ version, entries, snapshotVersion, entriesSinceSnapshot, ...(known.layer ? { layer: known.layer } : {}) });
    return upserts.length + deletes.length;
  }

  /** Cold path: the newest snapshot in one GET, then the few deltas after it. */
  private async rebuild(remote: RemoteWorkspace, version: number): Promise<number> {
    await fs.rm(this.tree, { recursive: true, force: true });
    await fs.mkdir(this.tree, { recursive: true });
    if (version === 0) {
      await this.finish({ version, entries: {}, snapshotVersion: 0, entriesSinceSnapshot: 0 });
      return 0;
    }
    const snapshot = await remote.latestSnapshot(version);
    const from = snapshot?.version ?? 0;
    let entries: Entries = snapshot?.entries ?? {};
    let entriesSinceSnapshot = 0;
    const deltas = await fetchDeltas(remote, from + 1, version);
    for (const d of deltas) {
      entries = applyDelta(entries, d);
      entriesSinceSnapshot += Object.keys(d.upserts).length + d.deletes.length;
    }
    checkWellFormed(remote, version, entries);
    const all = Object.entries(entries);
    const fromPack = new Set<string>();
    if (snapshot) {
      const packed: Entries = {};
      for (const [p, e] of all) {
        if (e.type === 'file' && snapshot.pack[e.sha256]) {
          packed[p] = e;
          fromPack.add(p);
        }
      }
      await this.makeDirs(all);
      if (fromPack.size > 0) await extractPack(await remote.getPackStream(snapshot), this.tree, packed, snapshot.pack);
    }
    await this.writeEntries(remote, all, fromPack, inlineBodiesOf(deltas));
    await this.finish({ version, entries, snapshotVersion: from, entriesSinceSnapshot });
    return all.length;
  }

  private async makeDirs(upserts: [string, ManifestEntry][]): Promise<void> {
    const dirs = upserts.filter(([, e]) => e.type === 'dir').sort(([a], [b]) => a.length - b.length);
    for (const [p] of dirs) {
      const real = path.join(this.tree, p);
      const st = await fs.lstat(real).catch(() => undefined);
      if (st?.isDirectory()) continue;
      // A file or link becoming a directory.
      if (st) await fs.rm(real, { force: true });
      await fs.mkdir(real, { recursive: true });
    }
  }

  /** Writes directories, symlinks and files (except those already written from a pack), then modes. */
  private async writeEntries(
    remote: RemoteWorkspace,
    upserts: [string, ManifestEntry][],
    written: Set<string>,
    bodies: ReadonlyMap<string, Buffer>,
  ): Promise<void> {
    await this.makeDirs(upserts);
    const others = upserts.filter(([p, e]) => e.type !== 'dir' && !written.has(p));
    await forEachConcurrent(others, TRANSFER_CONCURRENCY, async ([p, entry]) => {
      const real = path.join(this.tree, p);
      await fs.mkdir(path.dirname(real), { recursive: true });
      await fs.rm(real, { recursive: true, force: true });
      if (entry.type === 'symlink') await fs.symlink(entry.target, real);
      else if (entry.type === 'file') {
        const body = bodies.get(entry.sha256);
        if (body) await fs.writeFile(real, body);
        else await pipeline(await remote.getBlobStream(entry.sha256), createWriteStream(real));
      }
    });
    for (const [p, e] of upserts) if (e.type === 'file') chmodSync(path.join(this.tree, p), e.mode & 0o777);
    // Directories last and deepest first: a read-only directory must not block writing its children.
    const dirs = upserts.filter(([, e]) => e.type === 'dir').sort(([a], [b]) => b.length - a.length);
    for (const [p, e] of dirs) await fs.chmod(path.join(this.tree, p), (e as { mode: number }).mode & 0o777);
  }

  /** Records that the copy's layer is now the stored one (environment_save succeeded). */
  async markLayerStored(): Promise<void> {
    const state = await this.readState();
    if (state?.layer) await this.writeState({ ...state, layer: { ...state.layer, source: 'restored' } });
  }

  /** Marks the copy as possibly diverged from its recorded version (called before anything may write). */
  async markDirty(): Promise<LocalState | undefined> {
    const state = await this.readState();
    await fs.writeFile(this.dirtyFile, '');
    return state;
  }

  /** Removes the copy from disk and memory; answers whether there was one. */
  async discard(): Promise<boolean> {
    this.cache.delete(this.dir);
    const existed = await fs.stat(this.dir).then(
      () => true,
      () => false,
    );
    await fs.rm(this.dir, { recursive: true, force: true });
    return existed;
  }

  /** Forgets which version the tree matches (it may have diverged): the next call rebuilds it. */
  async forget(): Promise<void> {
    this.cache.delete(this.dir);
    await fs.writeFile(this.dirtyFile, '');
  }

  /**
   * Finds what changed since `base` (size/mtime/mode first; only candidates are hashed) and, if
   * anything did, uploads the changed bodies and claims version base+1 with a delta. A concurrent
   * publisher makes this throw VersionConflictError; a passed limit, LimitExceededError.
   */
  async publish(remote: RemoteWorkspace, base: LocalState, log: (message: string, err: unknown) => void = () => undefined): Promise<PublishOutcome> {
    const scanned = await this.scan(base, this.environment !== undefined);
    const layer = base.layer ? { layer: { ...base.layer, roots: scanned.layerRoots } } : {};
    const { upserts, deletes } = diffManifests(base.entries, scanned.entries);
    if (upserts.length === 0 && deletes.length === 0) {
      // Nothing changed: only a touched file's new stat (or a new layer root) is worth rewriting the record for.
      if (sameStats(base.stats, scanned.stats) && sameRoots(base.layer?.roots, scanned.layerRoots)) await this.markClean(base);
      else await this.writeState({ ...base, ...layer, stats: scanned.stats });
      return { version: base.version, changedPaths: 0, bytesUploaded: 0 };
    }
    checkLimits(scanned.entries, this.limits);
    const version = base.version + 1;
    const changed = upserts.length + deletes.length;
    const snapshotDue =
      base.version === 0 ||
      version - base.snapshotVersion >= this.snapshots.everyVersions ||
      base.entriesSinceSnapshot + changed >= entriesBeforeSnapshot(this.snapshots, Object.keys(scanned.entries).length);
    const bytesUploaded = await this.uploadVersion(remote, { base, entries: scanned.entries, upserts, deletes, snapshotDue });
    // The version is published: whatever happens to the local record now, the caller must learn
    // it, or every later call would start from the old version and conflict with this one.
    try {
      await this.writeState({
        ...layer,
        version,
        entries: scanned.entries,
        stats: scanned.stats,
        snapshotVersion: snapshotDue ? version : base.snapshotVersion,
        entriesSinceSnapshot: snapshotDue ? 0 : base.entriesSinceSnapshot + changed,
      });
    } catch (err) {
      log(`published version ${version} of workspace ${remote.id} but could not record it locally; the next call rebuilds`, err);
      await this.forget().catch(() => undefined);
    }
    return { version, changedPaths: changed, bytesUploaded };
  }

  /** Stores version base+1: its changed blobs, a snapshot when due, then the delta that claims it. Returns the bytes sent. */
  private async uploadVersion(
    remote: RemoteWorkspace,
    change: { base: LocalState; entries: Entries; upserts: [string, ManifestEntry][]; deletes: string[]; snapshotDue: boolean },
  ): Promise<number> {
    const { base, entries, upserts, deletes } = change;
    const version = base.version + 1;
    let bytesUploaded = 0;
    const delta: Delta = { version, createdAt: new Date().toISOString(), upserts: Object.fromEntries(upserts), deletes };
    // A first version lives in its snapshot alone; later ones also keep the changed bodies, which
    // warm copies catching up by deltas fetch: small ones inside the delta, the others as blobs.
    if (base.version > 0) {
      const { bodies, blobs } = await this.inlineBodies(upserts);
      if (Object.keys(bodies).length > 0) delta.bodies = bodies;
      await forEachConcurrent(blobs, TRANSFER_CONCURRENCY, async ([p, e]) => {
        bytesUploaded += await remote.putBlobFromFile(e.sha256, path.join(this.tree, p), e.size);
      });
    }
    if (change.snapshotDue) {
      delta.snapshot = randomBytes(8).toString('hex');
      const plan = planPack(entries);
      bytesUploaded += await remote.putSnapshot(
        { version, nonce: delta.snapshot, createdAt: delta.createdAt, entries, pack: plan.index },
        packStream(this.tree, plan),
        plan.size,
      );
    }
    return bytesUploaded + (await remote.putDelta(delta));
  }

  /**
   * Splits the changed files into bodies carried in the delta (up to INLINE_BODY_BYTES each and
   * INLINE_DELTA_BYTES in all) and the rest, stored as blobs. A body that no longer matches its
   * hash (a background command wrote meanwhile) goes the blob way, as before.
   */
  private async inlineBodies(upserts: [string, ManifestEntry][]): Promise<{ bodies: Record<string, string>; blobs: [string, FileEntry][] }> {
    const bodies: Record<string, string> = {};
    const blobs: [string, FileEntry][] = [];
    let inlined = 0;
    for (const [p, e] of upserts) {
      if (e.type !== 'file' || e.sha256 in bodies) continue;
      if (e.size <= INLINE_BODY_BYTES && inlined + e.size <= INLINE_DELTA_BYTES) {
        const body = await fs.readFile(path.join(this.tree, p));
        if (sha256Of(body) === e.sha256) {
          bodies[e.sha256] = body.toString('base64');
          inlined += body.length;
          continue;
        }
      }
      blobs.push([p, e]);
    }
    return { bodies, blobs };
  }

  /**
   * The tree as it is now, reusing known hashes where size, mtime and mode are unchanged; only
   * the other files are read. The walk is synchronous on purpose: 10,000 lstat calls take ~70 ms
   * that way and several times longer as 10,000 promises. The layer's roots are left out and
   * listed apart; with `collect`, so is every new dependency directory (environment-layer.ts).
   */
  async scan(
    known?: Pick<LocalState, 'entries' | 'stats' | 'layer'>,
    collect = false,
  ): Promise<{ entries: Entries; stats: Record<string, FileStat>; layerRoots: string[] }> {
    const entries: Entries = {};
    const stats: Record<string, FileStat> = {};
    const candidates: [string, FileStat, number][] = [];
    const layerRoots: string[] = [];
    const isLayerRoot = layerRootTest(known, collect);
    const walk = (relDir: string): void => {
      let names: string[];
      try {
        names = readdirSync(path.join(this.tree, relDir));
      } catch {
        return;
      }
      for (const name of names) {
        const rel = relDir ? `${relDir}/${name}` : name;
        const real = path.join(this.tree, rel);
        const st = lstatSync(real);
        // Commands create files as the runner's host user; a setuid/setgid bit must not survive
        // on the host's disk or into the workspace's history.
        const mode = st.mode & 0o777;
        if (st.mode & 0o7000 && !st.isSymbolicLink()) chmodSync(real, mode);
        if (st.isSymbolicLink()) {
          entries[rel] = { type: 'symlink', target: readlinkSync(real) };
        } else if (st.isDirectory() && isLayerRoot(rel, name)) {
          layerRoots.push(rel);
        } else if (st.isDirectory()) {
          entries[rel] = { type: 'dir', mode };
          walk(rel);
        } else if (st.isFile()) {
          recordFile({ entries, stats, candidates }, rel, { size: st.size, mtimeMs: st.mtimeMs, mode }, known);
        }
        // Sockets, fifos and devices are not workspace content.
      }
    };
    walk('');
    await forEachConcurrent(candidates, TRANSFER_CONCURRENCY, async ([rel, stat, mode]) => {
      entries[rel] = { type: 'file', sha256: await hashFile(path.join(this.tree, rel), stat.size), size: stat.size, mode };
    });
    distrustRecent(stats);
    return { entries, stats, layerRoots: layerRoots.sort() };
  }

  private async finish(state: Omit<LocalState, 'stats'>): Promise<void> {
    const stats: Record<string, FileStat> = {};
    for (const [p, e] of Object.entries(state.entries)) {
      if (e.type !== 'file') continue;
      const st = lstatSync(path.join(this.tree, p));
      stats[p] = { size: st.size, mtimeMs: st.mtimeMs, mode: st.mode & 0o777 };
    }
    distrustRecent(stats);
    await this.writeState({ ...state, stats });
  }

  /** The version the tree matches, or undefined when that is not known (dirty, never recorded). */
  async readState(): Promise<LocalState | undefined> {
    if (existsSync(this.dirtyFile)) return undefined;
    const cached = this.cache.get(this.dir);
    if (cached) return cached;
    try {
      const state = JSON.parse(await fs.readFile(this.stateFile, 'utf8')) as LocalState;
      this.cache.set(this.dir, state);
      return state;
    } catch {
      return undefined;
    }
  }

  private async forgetState(): Promise<void> {
    this.cache.delete(this.dir);
    await fs.rm(this.stateFile, { force: true });
    await fs.rm(this.dirtyFile, { force: true });
  }

  private async markClean(state: LocalState): Promise<void> {
    this.cache.set(this.dir, state);
    await fs.rm(this.dirtyFile, { force: true });
  }

  private async writeState(state: LocalState): Promise<void> {
    this.cache.delete(this.dir);
    const tmp = `${this.stateFile}.tmp`;
    await fs.writeFile(tmp, JSON.stringify(state));
    await fs.rename(tmp, this.stateFile);
    await this.markClean(state);
  }
}

function checkWellFormed(remote: RemoteWorkspace, version: number, entries: Entries): void {
  try {
    assertWellFormed(entries);
  } catch (err) {
    throw new WorkspaceMissingError(`Workspace ${remote.id} version ${version} is malformed: ${(err as Error).message}.`);
  }
}

/** Marks stats of files modified too recently to be trusted (see RACY_WINDOW_MS). */
function distrustRecent(stats: Record<string, FileStat>): void {
  const now = Date.now();
  for (const stat of Object.values(stats)) if (now - stat.mtimeMs < RACY_WINDOW_MS) stat.mtimeMs = -1;
}

/**
 * Which directories of the tree are the layer's: its recorded roots and, while collecting, any
 * new dependency directory (one the workspace's version does not hold: a committed `vendor/`
 * stays workspace content).
 */
function layerRootTest(known: Pick<LocalState, 'entries' | 'layer'> | undefined, collect: boolean): (rel: string, name: string) => boolean {
  const recorded = new Set(known?.layer?.roots);
  return (rel, name) => recorded.has(rel) || (collect && isLayerDirectoryName(name) && known?.entries[rel]?.type !== 'dir');
}

function sameRoots(a: string[] | undefined, b: string[]): boolean {
  return (a ?? []).length === b.length && b.every((r, i) => a![i] === r);
}

function sameStats(a: Record<string, FileStat>, b: Record<string, FileStat>): boolean {
  const keys = Object.keys(b);
  if (Object.keys(a).length !== keys.length) return false;
  for (const k of keys) {
    const x = a[k];
    const y = b[k]!;
    if (!x || x.size !== y.size || x.mtimeMs !== y.mtimeMs || x.mode !== y.mode) return false;
  }
  return true;
}

/** The bodies the deltas carry, each checked against its hash (one that does not match is not used). */
function inlineBodiesOf(deltas: Delta[]): Map<string, Buffer> {
  const bodies = new Map<string, Buffer>();
  for (const d of deltas) {
    for (const [sha, base64] of Object.entries(d.bodies ?? {})) {
      const body = Buffer.from(base64, 'base64');
      if (sha256Of(body) === sha) bodies.set(sha, body);
    }
  }
  return bodies;
}

const sha256Of = (body: Buffer): string => createHash('sha256').update(body).digest('hex');

export async function fetchDeltas(remote: RemoteWorkspace, from: number, to: number): Promise<Delta[]> {
  const versions = Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i);
  const deltas: Delta[] = new Array(versions.length);
  await forEachConcurrent(versions, TRANSFER_CONCURRENCY, async (v) => {
    deltas[v - from] = await remote.getDelta(v);
  });
  return deltas;
}

/** Small files in one read (most of a repository); large ones streamed. */
async function hashFile(file: string, size: number): Promise<string> {
  const hash = createHash('sha256');
  if (size <= 1024 * 1024) return hash.update(readFileSync(file)).digest('hex');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

export async function forEachConcurrent<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await fn(items[next++]!);
  });
  await Promise.all(workers);
}

/** A file's entry as known when its size, mtime and mode are unchanged; otherwise it is queued to be hashed. */
function recordFile(
  out: { entries: Entries; stats: Record<string, FileStat>; candidates: [string, FileStat, number][] },
  rel: string,
  stat: FileStat,
  known: Pick<LocalState, 'entries' | 'stats'> | undefined,
): void {
  const prevStat = known?.stats[rel];
  const prevEntry = known?.entries[rel];
  out.stats[rel] = stat;
  if (prevEntry?.type === 'file' && prevStat && prevStat.size === stat.size && prevStat.mtimeMs === stat.mtimeMs && prevStat.mode === stat.mode) {
    out.entries[rel] = { type: 'file', sha256: prevEntry.sha256, size: stat.size, mode: stat.mode };
  } else {
    out.candidates.push([rel, stat, stat.mode]);
  }
}
