import { existsSync, mkdirSync, symlinkSync } from 'node:fs';
import * as nodeModule from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { cachedDataVersionTag } from 'node:v8';

/** Folder beside a Lambda bundle's `index.mjs` holding the compile cache built with it (infra/constructs/compile-cache.ts). */
export const SHIPPED_COMPILE_CACHE_DIR = 'compile-cache';

/** Where the link to the shipped cache is made (one folder per uid): Lambda's code folder is read-only, its /tmp writable. */
const LINK_PARENT = 'stratus-compile-cache';

/** Node ≥ 22.1's `module.enableCompileCache` (the repository's @types/node is Node 20's, which lacks it). */
type EnableCompileCache = (options: { directory: string; portable: boolean }) => { status: number; message?: string };

/**
 * Turns on Node's compile cache with the cache shipped beside the bundle, before the bundle's
 * modules are compiled (the Lambda entry calls it, then imports the handler dynamically).
 *
 * Node reads a cache only from `DIR/<node version>-<arch>-<V8 cache tag>-<uid>/`, and which
 * uid Lambda runs the function as is not known when the bundle is built, while the code folder
 * cannot be written at run time. So DIR is a folder under the temp directory, and its one
 * subfolder under this process's own tag is a link to the shipped files. The tag no longer
 * guards the data then; V8 does: each entry carries V8's version and flag hash and the source's
 * hash, and an entry built by another Node or V8, or with other V8 flags, is rejected and the
 * module compiled as without a cache (docs/deploy.md, "Node's compile cache"). `portable`
 * keys the entries by the module's path relative to DIR, so the build computes the same keys
 * by laying the bundle out as `<root>/var/task` beside `<root>/tmp`.
 *
 * Returns what happened, for the benchmark and the logs: `none` (no cache shipped),
 * `unsupported` (a Node without a compile cache), or Node's status and message.
 */
export function enableShippedCompileCache(bundleDir: string): string {
  const shipped = path.join(bundleDir, SHIPPED_COMPILE_CACHE_DIR);
  const enable = (nodeModule as { enableCompileCache?: EnableCompileCache }).enableCompileCache;
  if (!existsSync(shipped)) return 'none';
  if (!enable) return 'unsupported';
  const uid = process.getuid ? `-${process.getuid()}` : '';
  const directory = path.join(tmpdir(), `${LINK_PARENT}${uid}`);
  const tag = `${process.version}-${process.arch}-${cachedDataVersionTag().toString(16).padStart(8, '0')}${uid}`;
  const link = path.join(directory, tag);
  try {
    mkdirSync(directory, { recursive: true });
    // Already there after a restart of the runtime in the same environment (its /tmp is kept).
    if (!existsSync(link)) symlinkSync(shipped, link, 'dir');
  } catch (err) {
    return `not linked: ${(err as Error).message}`;
  }
  const result = enable({ directory, portable: true });
  return `status ${result.status}${result.message ? `: ${result.message}` : ''}`;
}
