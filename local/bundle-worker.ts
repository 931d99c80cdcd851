import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Bundles land inside the repository, so their bare imports resolve from its node_modules. */
const BUNDLE_DIR = fileURLToPath(new URL('../.tmp/workers/', import.meta.url));

/**
 * Bundles a worker's TypeScript entry into one ESM file (packages stay external), as the runner
 * image bundles its handler, and returns the file's path. A worker process then starts on plain
 * Node: starting one through a TypeScript loader took 2–3 s, most of a local cold start. The
 * name carries the content hash, so concurrent stacks share one file and a changed source gets
 * a new one.
 */
export async function bundleWorker(entry: string): Promise<string> {
  const out = await build({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    write: false,
    logLevel: 'silent',
  });
  const code = out.outputFiles[0]!.contents;
  const hash = createHash('sha256').update(code).digest('hex').slice(0, 16);
  const file = path.join(BUNDLE_DIR, `${path.basename(entry, path.extname(entry))}-${hash}.mjs`);
  if (!existsSync(file)) {
    mkdirSync(BUNDLE_DIR, { recursive: true });
    const partial = `${file}.${process.pid}.tmp`;
    writeFileSync(partial, code);
    renameSync(partial, file);
  }
  return file;
}
