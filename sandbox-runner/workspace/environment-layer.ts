import { createReadStream, createWriteStream, lstatSync, promises as fs, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { pack, type Pack } from 'tar-stream';
import { isLayerDirectoryName } from '../common/environment-rules.ts';
import { DEFAULT_ARCHIVE_LIMITS, type ArchiveLimits } from './archive-guards.ts';
import { ArchiveError, importTarGz } from './archive-import.ts';
import { LimitExceededError } from './limits.ts';
import type { Entries } from './manifest.ts';
import { isNotFound, isPreconditionFailed, type RemoteWorkspace } from './remote-workspace.ts';

/**
 * A session's cached environment on the runner's side (docs/workspaces.md, "The cached
 * environment"): the dependency directories the set-up steps installed, kept as one tar.gz per
 * repository and set-up fingerprint, restored into the tree beside the workspace's files and
 * never part of the workspace's versions (the copy's scan leaves the layer's roots out).
 */
export interface LayerTarget {
  /** The layer's key in the bucket (common/environment-layer-key.ts). */
  key: string;
  /** The bucket with the layer's own credentials (read, or read and write for a save). */
  store: RemoteWorkspace;
  /** The most bytes of file content the layer may hold, restored or saved. */
  maxBytes: number;
}

/** What the copy records about its layer (in its state, with the version it matches). */
export interface LayerState {
  key: string;
  /** The layer's directories in the tree, relative to it: never workspace content. */
  roots: string[];
  /** `restored` from the stored layer; `collected` when none was stored and the set-up builds it here. */
  source: 'restored' | 'collected';
}

export type LayerOutcome =
  | { status: 'restored'; roots: string[]; files: number; bytes: number }
  | { status: 'present'; roots: string[] }
  | { status: 'absent' }
  | { status: 'refused'; message: string };

/** Files of one layer (node_modules of a large monorepo reach a few hundred thousand). */
export const LAYER_MAX_FILES = 500_000;
const LAYER_MAX_ENTRIES = 1_000_000;

/**
 * A layer's archive may expand to what its own limits allow (its content plus a header and
 * padding per entry, 1 KiB at most), whatever its compression ratio: dependency folders full of
 * near-identical files compress past the 100:1 an import allows, and the layer's byte limit
 * already stops a bomb at that size.
 */
function layerArchiveLimits(maxBytes: number): ArchiveLimits {
  return { ...DEFAULT_ARCHIVE_LIMITS, maxEntries: LAYER_MAX_ENTRIES, expansionFloorBytes: maxBytes + LAYER_MAX_ENTRIES * 1024 };
}
/** Compression level of a saved layer: level 1 packs several times faster than 6 for a few percent more bytes. */
const GZIP_LEVEL = 1;
/** How much of the archive may wait for the compressor before packing pauses. */
const PACK_BUFFER_BYTES = 8 * 1024 * 1024;
/** Files up to this size are read at once into the archive. */
const SMALL_FILE_BYTES = 1024 * 1024;

/**
 * Brings the stored layer `target.key` into `tree` in one GET, through the archive guards
 * (archive-import.ts) into an empty staging folder first, then moves each of its roots into
 * place. A root is taken only where the workspace (`entries`, the version the tree holds) has
 * no such path and every folder above it is a directory of that version, so a layer can never
 * replace workspace content or be written through a link.
 */
export async function restoreLayer(dir: string, tree: string, target: LayerTarget, entries: Entries): Promise<{ state: LayerState; outcome: LayerOutcome }> {
  const collected: LayerState = { key: target.key, roots: [], source: 'collected' };
  const object = await target.store.getSizedStream(target.key).catch((err: unknown) => {
    if (isNotFound(err)) return undefined;
    throw err;
  });
  if (!object) return { state: collected, outcome: { status: 'absent' } };
  const staging = path.join(dir, 'layer-staging');
  await fs.rm(staging, { recursive: true, force: true });
  await fs.mkdir(staging, { mode: 0o700 });
  try {
    const limits = { maxBytes: target.maxBytes, maxFiles: LAYER_MAX_FILES, maxFileBytes: target.maxBytes };
    const summary = await importTarGz({ stream: object.stream, compressedBytes: object.size }, staging, limits, layerArchiveLimits(target.maxBytes));
    const roots: string[] = [];
    for (const root of findLayerRoots(staging)) if (await placeRoot(staging, tree, root, entries)) roots.push(root);
    return { state: { key: target.key, roots, source: 'restored' }, outcome: { status: 'restored', roots, files: summary.files, bytes: summary.bytes } };
  } catch (err) {
    if (!(err instanceof ArchiveError || err instanceof LimitExceededError)) throw err;
    return { state: collected, outcome: { status: 'refused', message: `The cached environment ${target.key} was not restored: ${err.message}` } };
  } finally {
    await fs.rm(staging, { recursive: true, force: true });
  }
}

/** Moves one root from staging into the tree when the rule above allows it. */
async function placeRoot(staging: string, tree: string, root: string, entries: Entries): Promise<boolean> {
  if (entries[root]) return false;
  const parts = root.split('/');
  for (let i = 1; i < parts.length; i++) {
    const ancestor = parts.slice(0, i).join('/');
    if (entries[ancestor]?.type !== 'dir' || !lstatSync(path.join(tree, ancestor)).isDirectory()) return false;
  }
  const dest = path.join(tree, root);
  await fs.rm(dest, { recursive: true, force: true });
  await fs.rename(path.join(staging, root), dest);
  return true;
}

/** The dependency directories of a folder: the first one on each path, not what lies inside it. */
export function findLayerRoots(base: string): string[] {
  const roots: string[] = [];
  const walk = (rel: string): void => {
    for (const name of readdirSync(path.join(base, rel))) {
      const child = rel ? `${rel}/${name}` : name;
      if (!lstatSync(path.join(base, child)).isDirectory()) continue;
      if (isLayerDirectoryName(name)) roots.push(child);
      else walk(child);
    }
  };
  walk('');
  return roots.sort();
}

/** Removes a layer's roots from the tree (another fingerprint's layer is about to take their place). */
export async function removeLayer(tree: string, state: LayerState): Promise<void> {
  for (const root of state.roots) await fs.rm(path.join(tree, root), { recursive: true, force: true });
}

export type SaveOutcome =
  | { saved: true; files: number; bytes: number; compressedBytes: number }
  | { saved: false; reason: 'empty' | 'already_stored' | 'too_large'; message: string };

/**
 * Packs the layer's roots as one tar.gz (links as links, modes kept) and stores it create-only at
 * its key: a layer already stored for this fingerprint (another run's set-up finished first) is
 * kept. A layer past `maxBytes` is not stored; the session goes on without a cached environment.
 */
export async function saveLayer(dir: string, tree: string, target: LayerTarget, roots: string[]): Promise<SaveOutcome> {
  const present = roots.filter((r) => lstatSync(path.join(tree, r), { throwIfNoEntry: false })?.isDirectory());
  if (present.length === 0) return { saved: false, reason: 'empty', message: 'The set-up created no dependency directory; no environment was cached.' };
  const file = path.join(dir, 'layer-save.tar.gz');
  try {
    const counted = await packRoots(tree, present, file, target.maxBytes);
    if (!counted) {
      return {
        saved: false,
        reason: 'too_large',
        message: `The environment holds more than ${target.maxBytes} bytes (STRATUS_ENVIRONMENT_MAX_BYTES); it was not cached.`,
      };
    }
    const { size } = await fs.stat(file);
    try {
      await target.store.put(target.key, createReadStream(file), { create: true, contentLength: size, contentType: 'application/gzip' });
    } catch (err) {
      if (!isPreconditionFailed(err)) throw err;
      return { saved: false, reason: 'already_stored', message: 'An environment for this fingerprint was already stored; it was kept.' };
    }
    return { saved: true, ...counted, compressedBytes: size };
  } finally {
    await fs.rm(file, { force: true });
  }
}

/** Writes the roots' files into a tar.gz at `file`; undefined once their content passes `maxBytes`. */
async function packRoots(tree: string, roots: string[], file: string, maxBytes: number): Promise<{ files: number; bytes: number } | undefined> {
  // A deep buffer: with the default 16 KiB, every 16th small file waits for gzip and the disk.
  const tar = pack({ highWaterMark: PACK_BUFFER_BYTES } as Parameters<typeof pack>[0]);
  const writing = pipeline(tar, createGzip({ level: GZIP_LEVEL, chunkSize: 256 * 1024 }), createWriteStream(file));
  const packer = new Packer(tar, { files: 0, bytes: 0 }, maxBytes);
  let tooLarge = false;
  try {
    for (const root of roots) {
      if (!(await packTree(packer, tree, root))) {
        tooLarge = true;
        break;
      }
    }
    await packer.flush();
    tar.finalize();
  } catch (err) {
    tar.destroy(err as Error);
  }
  await writing;
  return tooLarge ? undefined : packer.counts;
}

/**
 * Adds entries without waiting for each one to be written (waiting per entry costs a trip through
 * the compressor for every small file, several times the packing itself); it waits once the
 * bytes queued since the last wait pass half the buffer. Entries are written in order, so the
 * last one's callback means all before it are out.
 */
class Packer {
  private queued = 0;
  private last: Promise<void> = Promise.resolve();
  private failure: unknown;

  constructor(
    readonly tar: Pack,
    readonly counts: { files: number; bytes: number },
    readonly maxBytes: number,
  ) {}

  async add(header: Parameters<Pack['entry']>[0], body: Buffer = Buffer.alloc(0)): Promise<void> {
    this.last = new Promise<void>((resolve, reject) => this.tar.entry(header, body, (err) => (err ? reject(err) : resolve())));
    this.last.catch((err: unknown) => (this.failure ??= err));
    this.queued += body.length + 512;
    if (this.queued > PACK_BUFFER_BYTES / 2) await this.flush();
  }

  async flush(): Promise<void> {
    this.queued = 0;
    await this.last;
    if (this.failure !== undefined) throw this.failure;
  }
}

/** Adds `rel` and everything under it; false once the content passes `maxBytes`. Sockets and devices are left out. */
async function packTree(packer: Packer, tree: string, rel: string): Promise<boolean> {
  const real = path.join(tree, rel);
  const st = lstatSync(real);
  const mode = st.mode & 0o777;
  if (st.isSymbolicLink()) await packer.add({ name: rel, type: 'symlink', linkname: readlinkSync(real), mode: 0o777 });
  else if (st.isFile()) {
    packer.counts.files += 1;
    packer.counts.bytes += st.size;
    if (packer.counts.bytes > packer.maxBytes) return false;
    // Dependency files are small: one read each, no stream per file (tens of thousands of them).
    if (st.size <= SMALL_FILE_BYTES) await packer.add({ name: rel, type: 'file', size: st.size, mode }, readFileSync(real));
    else {
      await packer.flush();
      await new Promise<void>((resolve, reject) => {
        const sink = packer.tar.entry({ name: rel, type: 'file', size: st.size, mode }, (err) => (err ? reject(err) : resolve()));
        createReadStream(real).on('error', reject).pipe(sink);
      });
    }
  } else if (st.isDirectory()) {
    await packer.add({ name: rel, type: 'directory', mode });
    for (const name of readdirSync(real).sort()) if (!(await packTree(packer, tree, `${rel}/${name}`))) return false;
  }
  return true;
}
