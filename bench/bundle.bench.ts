import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Metafile } from 'esbuild';
import { bundleLambda, ENTRIES, REPO_ROOT, startFiles } from '../infra/constructs/bundle-options.ts';
import { printCompileCacheImport } from './compile-cache-import.ts';

const IMPORT_RUNS = 5;

/** The API function's targets (issue "bundle"): start path and cold import, as measured below. */
const TARGET_START_KB = 1_500;
const TARGET_IMPORT_MS = 100;

/**
 * Builds the Lambda functions exactly as the CDK app bundles them (bundleLambda in
 * infra/constructs/bundle-options.ts) and reports, for each, what a cold start reads and compiles
 * (index.mjs and the chunks it imports statically: the "start" files) next to everything
 * deployed (the chunks behind dynamic imports included), and the time a fresh `node` process
 * takes to import index.mjs, wall and CPU (CPU time is the steadier figure on a loaded machine).
 * The process runs as Lambda runs it, with the runtime's `awslambda` globals defined first, once
 * with `--enable-source-maps` (the functions' NODE_OPTIONS when the stage's `sourceMaps` is on)
 * and once without, so the cost of the source maps shows on its own. For the API function, with
 * a Node 24 binary in STRATUS_BENCH_NODE24, also the cold import in Node 24 with and without the
 * compile cache bundleLambda can ship (bench/compile-cache-import.ts).
 *
 * The targets apply to the API function: start path ≤ TARGET_START_KB KB (KB of 1,024 bytes,
 * minified, before gzip) and the import ≤ TARGET_IMPORT_MS ms, the median wall time of
 * `await import(index.mjs)` in a fresh node, as deployed (with source maps), on an idle machine.
 */
export async function run(): Promise<void> {
  const outDir = mkdtempSync(path.join(tmpdir(), 'stratus-bundle-'));
  try {
    for (const [name, entry] of Object.entries(ENTRIES)) {
      const dir = path.join(outDir, name);
      const started = performance.now();
      const metafile = bundleLambda(entry, dir);
      const buildMs = performance.now() - started;
      const start = startFiles(metafile, path.join(dir, 'index.mjs'));
      const all = Object.keys(metafile.outputs).filter((f) => f.endsWith('.mjs'));
      const bytes = (files: string[]) => files.reduce((sum, f) => sum + metafile.outputs[f]!.bytes, 0);
      const gzip = start.reduce((sum, f) => sum + gzipSync(readFileSync(path.resolve(REPO_ROOT, f))).length, 0);
      const withMaps = importFigures(path.join(dir, 'index.mjs'), true);
      const withoutMaps = importFigures(path.join(dir, 'index.mjs'), false);
      console.log(
        `${name.padEnd(5)} start ${kb(bytes(start))} KB in ${start.length} files (${kb(gzip)} KB gzipped); deployed ${kb(bytes(all))} KB in ${all.length} files; built in ${buildMs.toFixed(0)} ms; ` +
          `import in a fresh node (median of ${IMPORT_RUNS}, node ${process.versions.node}): with source maps ${withMaps.text}; without ${withoutMaps.text}`,
      );
      if (name === 'api') {
        const met = (ok: boolean) => (ok ? 'met' : 'NOT met');
        console.log(
          `      targets: start ≤ ${TARGET_START_KB} KB: ${kb(bytes(start))} KB, ${met(bytes(start) / 1024 <= TARGET_START_KB)}; ` +
            `import ≤ ${TARGET_IMPORT_MS} ms (median wall, with source maps, idle machine): ${withMaps.wall.toFixed(0)} ms wall / ${withMaps.cpu.toFixed(0)} ms CPU, ${met(withMaps.wall <= TARGET_IMPORT_MS)}`,
        );
        printCompileCacheImport(dir);
      }
      console.log(
        `      largest parts at start: ${heaviestPackages(metafile, start, 6)
          .map(([pkg, b]) => `${pkg} ${kb(b)} KB`)
          .join(', ')}`,
      );
    }
  } finally {
    rmSync(outDir, { recursive: true, force: true });
  }
}

/** Bytes in the given output files per npm package (or "own code"), largest first. */
function heaviestPackages(metafile: Metafile, files: string[], n: number): [string, number][] {
  const totals = new Map<string, number>();
  for (const file of files) {
    for (const [input, { bytesInOutput }] of Object.entries(metafile.outputs[file]!.inputs)) {
      const match = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input);
      const key = match ? match[1]! : 'own code';
      totals.set(key, (totals.get(key) ?? 0) + bytesInOutput);
    }
  }
  return [...totals.entries()].sort((a, b) => b[1] - a[1]).slice(0, n);
}

/** Median wall and CPU time of IMPORT_RUNS fresh imports, with the spread of the wall time. */
function importFigures(file: string, sourceMaps: boolean): { wall: number; cpu: number; text: string } {
  const runs = Array.from({ length: IMPORT_RUNS }, () => importMs(file, sourceMaps));
  const wall = runs.map((r) => r.wall).sort((a, b) => a - b);
  const cpu = runs.map((r) => r.cpu).sort((a, b) => a - b);
  const mid = Math.floor(IMPORT_RUNS / 2);
  return {
    wall: wall[mid]!,
    cpu: cpu[mid]!,
    text: `${wall[mid]!.toFixed(0)} ms wall (min ${wall[0]!.toFixed(0)}, max ${wall.at(-1)!.toFixed(0)}), ${cpu[mid]!.toFixed(0)} ms CPU`,
  };
}

function importMs(file: string, sourceMaps: boolean): { wall: number; cpu: number } {
  const script = [
    'globalThis.awslambda = { streamifyResponse: (h) => h, HttpResponseStream: { from: (s) => s } };',
    'const t = performance.now(); const c = process.cpuUsage();',
    `await import(${JSON.stringify(path.resolve(file))});`,
    'const u = process.cpuUsage(c);',
    'process.stdout.write(JSON.stringify({ wall: performance.now() - t, cpu: (u.user + u.system) / 1000 }));',
  ].join('\n');
  const out = execFileSync(process.execPath, [...(sourceMaps ? ['--enable-source-maps'] : []), '--input-type=module', '-e', script], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
  });
  return JSON.parse(out) as { wall: number; cpu: number };
}

function kb(bytes: number): string {
  return (bytes / 1024).toFixed(0);
}
