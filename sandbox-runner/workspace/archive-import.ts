import { createWriteStream, promises as fs } from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { extract } from 'tar-stream';
import { WorkspaceLimitError, type WorkspaceLimits } from './limits.ts';

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

/**
 * Extracts a tar.gz into an empty directory without ever writing through a link: every entry's
 * path is normalised and must stay inside, and no ancestor of an entry may be a symlink or a file
 * written earlier (the classic "link, then write through it" attack). Symlinks are kept as links;
 * hard links become copies of a file already extracted. Limits are checked while streaming.
 */
export async function importTarGz(source: Readable, dest: string, limits: WorkspaceLimits): Promise<ImportSummary> {
  const kinds = new Map<string, Kind>([['', 'dir']]);
  const summary: ImportSummary = { files: 0, bytes: 0, skipped: 0 };
  const dirModes: [string, number][] = [];
  const untar = extract();

  const ensureParents = async (rel: string) => {
    const parts = rel.split('/');
    for (let i = 1; i < parts.length; i++) {
      const prefix = parts.slice(0, i).join('/');
      const kind = kinds.get(prefix);
      if (kind === 'dir') continue;
      if (kind) throw new ArchiveError(`Archive entry "${rel}" goes through "${prefix}", which is a ${kind === 'symlink' ? 'symbolic link' : 'file'}.`);
      await fs.mkdir(path.join(dest, prefix));
      kinds.set(prefix, 'dir');
    }
  };

  const consume = (async () => {
    for await (const entry of untar) {
      const header = entry.header;
      const rel = normalizeEntry(header.name);
      if (rel === undefined) {
        entry.resume();
        continue;
      }
      if (kinds.has(rel) && !(header.type === 'directory' && kinds.get(rel) === 'dir')) {
        throw new ArchiveError(`Archive entry "${rel}" appears twice.`);
      }
      await ensureParents(rel);
      const real = path.join(dest, rel);
      const mode = (header.mode ?? 0o644) & 0o777;
      switch (header.type) {
        case 'directory':
          if (!kinds.has(rel)) await fs.mkdir(real);
          kinds.set(rel, 'dir');
          dirModes.push([real, mode | 0o700]);
          entry.resume();
          break;
        case 'file':
        case 'contiguous-file': {
          countFile(summary, rel, header.size ?? 0, limits);
          kinds.set(rel, 'file');
          await pipeline(entry, createWriteStream(real, { mode: 0o600 }));
          await fs.chmod(real, mode);
          break;
        }
        case 'symlink':
          kinds.set(rel, 'symlink');
          await fs.symlink(header.linkname ?? '', real);
          entry.resume();
          break;
        case 'link': {
          const target = normalizeEntry(header.linkname ?? '');
          if (target === undefined || kinds.get(target) !== 'file') {
            throw new ArchiveError(`Archive entry "${rel}" is a hard link to "${header.linkname}", which is not a file in the archive.`);
          }
          const size = (await fs.stat(path.join(dest, target))).size;
          countFile(summary, rel, size, limits);
          kinds.set(rel, 'file');
          await fs.copyFile(path.join(dest, target), real);
          await fs.chmod(real, mode);
          entry.resume();
          break;
        }
        default:
          summary.skipped += 1;
          entry.resume();
      }
    }
  })();

  try {
    await Promise.all([pipeline(source, createGunzip(), untar).catch((err: unknown) => {
      throw new ArchiveError(`The upload is not a readable tar.gz archive: ${(err as Error).message}`);
    }), consume]);
  } catch (err) {
    untar.destroy();
    source.destroy();
    throw err;
  }
  // Deepest first, after the contents are written, so a read-only directory blocks nothing.
  for (const [dir, mode] of dirModes.sort(([a], [b]) => b.length - a.length)) await fs.chmod(dir, mode);
  return summary;
}

function countFile(summary: ImportSummary, rel: string, size: number, limits: WorkspaceLimits): void {
  summary.files += 1;
  summary.bytes += size;
  if (size > limits.maxFileBytes) {
    throw new WorkspaceLimitError(`The archive's file ${rel} is ${size} bytes, more than the single-file limit of ${limits.maxFileBytes}.`);
  }
  if (summary.files > limits.maxFiles) {
    throw new WorkspaceLimitError(`The archive holds more than ${limits.maxFiles} files, the workspace limit.`);
  }
  if (summary.bytes > limits.maxBytes) {
    throw new WorkspaceLimitError(`The archive holds more than ${limits.maxBytes} bytes, the workspace limit.`);
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
