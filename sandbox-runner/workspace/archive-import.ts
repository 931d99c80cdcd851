import { chmodSync, createWriteStream, promises as fs, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { extract, type Extract } from 'tar-stream';
import { entryPathProblem, expansionMeter, MAX_LINK_TARGET_BYTES, type ArchiveLimits } from './archive-guards.ts';
import { showKey } from '../common/file-keys.ts';
import type { WorkspaceLimits } from '../common/workspace-limits.ts';
import { LimitExceededError } from './limits.ts';

/** The archive itself is unusable (not gzip/tar, an entry escaping the workspace). */
export class ArchiveError extends Error {
  override name = 'ArchiveError';
}

export interface ImportSummary {
  files: number;
  bytes: number;
  /** Entries that are not workspace content (devices, fifos) and were left out. */
  skipped: number;
}

type Kind = 'dir' | 'file' | 'symlink';

/** The archive to import: its compressed stream and size (the expansion limit is a multiple of it). */
export interface ArchiveSource {
  stream: Readable;
  compressedBytes: number;
}

/**
 * Extracts a tar.gz into an empty directory without ever writing through a link: every entry's
 * path is normalised and must stay inside, and no ancestor of an entry may be a symlink or a file
 * written earlier (the classic "link, then write through it" attack). Symlinks are kept as links;
 * hard links become copies of a file already extracted. Limits are checked while streaming: an
 * entry's path before anything of it is created, sizes from each header before its body is
 * written, and the expansion as the stream is decompressed (archive-guards.ts).
 */
export async function importTarGz(source: ArchiveSource, dest: string, limits: WorkspaceLimits, archiveLimits: ArchiveLimits): Promise<ImportSummary> {
  const state: ImportState = {
    dest,
    limits,
    archiveLimits,
    entries: 0,
    kinds: new Map<string, Kind>([['', 'dir']]),
    summary: { files: 0, bytes: 0, skipped: 0 },
    dirModes: [],
  };
  const untar = extract();
  // The first failure is the one reported: the damage it causes downstream (a destroyed stream,
  // an aborted entry) says nothing the caller can use.
  let failure: unknown;
  const fail = (err: unknown) => {
    failure ??= err;
    untar.destroy();
    source.stream.destroy();
  };
  await Promise.all([
    pipeline(source.stream, createGunzip(), expansionMeter(source.compressedBytes, archiveLimits), untar).catch((err: unknown) => fail(streamFailure(err))),
    consume(state, untar).catch(fail),
  ]);
  if (failure !== undefined) throw failure;
  // Deepest first, after the contents are written, so a read-only directory blocks nothing.
  for (const [dir, mode] of state.dirModes.sort(([a], [b]) => b.length - a.length)) await fs.chmod(dir, mode);
  return state.summary;
}

/** Imports each entry in order; an error reading the next one is the archive's fault. */
async function consume(state: ImportState, untar: Extract): Promise<void> {
  const entries = untar[Symbol.asyncIterator]();
  for (;;) {
    const next = await entries.next().catch((err: unknown) => {
      throw streamFailure(err);
    });
    if (next.done) return;
    await importEntry(state, next.value);
  }
}

/** A failure of the compressed stream: the expansion limit, or bytes that are not a gzip'd tar. */
function streamFailure(err: unknown): Error {
  if (err instanceof LimitExceededError || err instanceof ArchiveError) return err;
  return new ArchiveError(`The upload is not a gzip'd tar archive (${(err as Error).message}); send a .tar.gz file.`);
}

interface ImportState {
  dest: string;
  limits: WorkspaceLimits;
  archiveLimits: ArchiveLimits;
  /** Entries seen so far, of any kind. */
  entries: number;
  /** What each extracted path is, '' being the destination itself. */
  kinds: Map<string, Kind>;
  summary: ImportSummary;
  /** Directory modes, applied at the end. */
  dirModes: [string, number][];
}

/** One archive entry as tar-stream yields it: a readable body with its header. */
type Entry = Extract extends AsyncIterable<infer E> ? E : never;

async function importEntry(state: ImportState, entry: Entry): Promise<void> {
  const { header } = entry;
  const rel = normalizeEntry(header.name);
  if (rel === undefined) {
    entry.resume();
    return;
  }
  checkEntry(state, rel, header);
  await ensureParents(state, rel);
  const real = path.join(state.dest, rel);
  const mode = (header.mode ?? 0o644) & 0o777;
  switch (header.type) {
    case 'directory':
      if (!state.kinds.has(rel)) await fs.mkdir(real);
      state.kinds.set(rel, 'dir');
      state.dirModes.push([real, mode | 0o700]);
      entry.resume();
      return;
    case 'file':
    case 'contiguous-file':
      countFile(state.summary, rel, header.size ?? 0, state.limits);
      state.kinds.set(rel, 'file');
      await writeBody(entry, real, header.size ?? 0);
      chmodSync(real, mode);
      return;
    case 'symlink':
      state.kinds.set(rel, 'symlink');
      await fs.symlink(header.linkname ?? '', real);
      entry.resume();
      return;
    case 'link':
      await copyHardLink(state, rel, header.linkname ?? '', mode);
      entry.resume();
      return;
    default:
      state.summary.skipped += 1;
      entry.resume();
  }
}

/** Bodies up to this size are collected and written in one call (most files of a source tree or a dependency folder). */
const SMALL_BODY_BYTES = 1024 * 1024;

/**
 * Writes an entry's body (its size is checked already). A body cut short is the archive's fault;
 * a write that fails is the runner's. Small bodies skip the write stream, whose set-up costs more
 * than the write itself for thousands of small files.
 */
async function writeBody(entry: Entry, real: string, size: number): Promise<void> {
  if (size > SMALL_BODY_BYTES) {
    await pipeline(entry, createWriteStream(real, { mode: 0o600 })).catch((err: unknown) => {
      throw (err as NodeJS.ErrnoException).syscall ? err : streamFailure(err);
    });
    return;
  }
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of entry) chunks.push(chunk as Buffer);
  } catch (err) {
    throw streamFailure(err);
  }
  writeFileSync(real, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks), { mode: 0o600 });
}

/** What is refused from the header alone, before anything of the entry is created. */
function checkEntry(state: ImportState, rel: string, header: Entry['header']): void {
  state.entries += 1;
  if (state.entries > state.archiveLimits.maxEntries) {
    throw new LimitExceededError(`The archive holds more than ${state.archiveLimits.maxEntries} entries (files, directories and links), the import limit.`);
  }
  const pathProblem = entryPathProblem(rel, state.archiveLimits);
  if (pathProblem) throw new ArchiveError(pathProblem);
  if (state.kinds.has(rel) && !(header.type === 'directory' && state.kinds.get(rel) === 'dir')) {
    throw new ArchiveError(`Archive entry "${rel}" appears twice.`);
  }
  if (header.type === 'symlink' && Buffer.byteLength(header.linkname ?? '') > MAX_LINK_TARGET_BYTES) {
    throw new ArchiveError(
      `Archive entry ${showKey(rel)} is a symbolic link whose target is longer than ${MAX_LINK_TARGET_BYTES} bytes, the file system's limit.`,
    );
  }
}

/** Creates the missing directories above an entry; refuses to go through a link or a file. */
async function ensureParents(state: ImportState, rel: string): Promise<void> {
  const parts = rel.split('/');
  for (let i = 1; i < parts.length; i++) {
    const prefix = parts.slice(0, i).join('/');
    const kind = state.kinds.get(prefix);
    if (kind === 'dir') continue;
    if (kind) throw new ArchiveError(`Archive entry "${rel}" goes through "${prefix}", which is a ${kind === 'symlink' ? 'symbolic link' : 'file'}.`);
    await fs.mkdir(path.join(state.dest, prefix));
    state.kinds.set(prefix, 'dir');
  }
}

/** A hard link becomes a copy of a file already extracted. */
async function copyHardLink(state: ImportState, rel: string, linkname: string, mode: number): Promise<void> {
  const target = normalizeEntry(linkname);
  if (target === undefined || state.kinds.get(target) !== 'file') {
    throw new ArchiveError(`Archive entry "${rel}" is a hard link to "${linkname}", which is not a file in the archive.`);
  }
  const real = path.join(state.dest, rel);
  const size = (await fs.stat(path.join(state.dest, target))).size;
  countFile(state.summary, rel, size, state.limits);
  state.kinds.set(rel, 'file');
  await fs.copyFile(path.join(state.dest, target), real);
  await fs.chmod(real, mode);
}

function countFile(summary: ImportSummary, rel: string, size: number, limits: WorkspaceLimits): void {
  summary.files += 1;
  summary.bytes += size;
  if (size > limits.maxFileBytes) {
    throw new LimitExceededError(`The archive's file ${rel} is ${size} bytes, more than the single-file limit of ${limits.maxFileBytes}.`);
  }
  if (summary.files > limits.maxFiles) {
    throw new LimitExceededError(`The archive holds more than ${limits.maxFiles} files, the workspace limit.`);
  }
  if (summary.bytes > limits.maxBytes) {
    throw new LimitExceededError(`The archive holds more than ${limits.maxBytes} bytes, the workspace limit.`);
  }
}

/** A relative path inside the workspace, '' for the root itself (skipped), or throws for an escape. */
function normalizeEntry(name: string): string | undefined {
  const trimmed = name.replace(/^\.\/+/, '').replace(/\/+$/, '');
  if (trimmed === '' || trimmed === '.') return undefined;
  const normalized = path.posix.normalize(trimmed);
  if (path.posix.isAbsolute(name) || normalized === '..' || normalized.startsWith('../') || normalized.split('/').includes('..')) {
    throw new ArchiveError(`Archive entry "${name}" points outside the workspace.`);
  }
  return normalized;
}
