import { Transform, type TransformCallback } from 'node:stream';
import { keyProblem, showKey } from '../common/file-keys.ts';
import { LimitExceededError } from './limits.ts';

/**
 * Limits an archive import applies on top of the workspace's own (limits.ts), all while
 * streaming, so a hostile archive is refused before it costs more than the limit it passes.
 */
export interface ArchiveLimits {
  /**
   * The archive may expand to at most this many times its compressed size. 100: ordinary source
   * trees and dependency folders compress 3–15:1 as tar.gz, even a tar of empty files (all
   * headers) stays under 30:1, while gzip's ceiling, which a zip bomb uses, is about 1,030:1.
   */
  maxExpansionRatio: number;
  /** Whatever the ratio, this much may always be expanded (a small archive of repetitive text). */
  expansionFloorBytes: number;
  /** Path components of one entry (`a/b/c` is 3): a 2,000-deep tree breaks every tool that walks it. */
  maxDepth: number;
  /** Entries of any kind (directories and links too, which the file limit does not count). */
  maxEntries: number;
}

export const DEFAULT_ARCHIVE_LIMITS: ArchiveLimits = {
  maxExpansionRatio: 100,
  expansionFloorBytes: 16 * 1024 * 1024,
  maxDepth: 256,
  maxEntries: 100_000,
};

/**
 * Passes the decompressed tar stream through and fails it the moment it passes what an archive
 * of `compressedBytes` may expand to, so a gzip bomb is stopped after that many bytes, not after
 * it has been written out.
 */
export function expansionMeter(compressedBytes: number, limits: ArchiveLimits): Transform {
  const cap = Math.max(limits.expansionFloorBytes, compressedBytes * limits.maxExpansionRatio);
  let expanded = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback) {
      expanded += chunk.length;
      if (expanded <= cap) return done(null, chunk);
      done(
        new LimitExceededError(
          `The archive expands to more than ${cap} bytes from ${compressedBytes} compressed bytes: an import may expand at most ${limits.maxExpansionRatio} times the archive's size (at least ${limits.expansionFloorBytes} bytes). Nothing was imported.`,
        ),
      );
    },
  });
}

/** Longest symbolic link target Linux stores (PATH_MAX less the terminating NUL). */
export const MAX_LINK_TARGET_BYTES = 4_095;

/**
 * Why an entry's (normalised, relative) path cannot be written in a workspace, or undefined:
 * the workspace's key rules (NAME_MAX 255 bytes per component, 3,072 bytes in all: file-keys.ts)
 * and the depth limit. Checked before the entry or any directory above it is created.
 */
export function entryPathProblem(rel: string, limits: ArchiveLimits): string | undefined {
  const problem = keyProblem(rel);
  if (problem) return `Archive entry ${showKey(rel)} cannot be stored in a workspace: ${problem}.`;
  const depth = rel.split('/').length;
  if (depth > limits.maxDepth) return `Archive entry ${showKey(rel)} is ${depth} directories deep; at most ${limits.maxDepth} are allowed.`;
  return undefined;
}
