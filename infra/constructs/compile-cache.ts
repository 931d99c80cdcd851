import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SHIPPED_COMPILE_CACHE_DIR } from '../../functions/handlers/compile-cache.ts';

/**
 * The Node binary that builds the compile cache shipped with each Lambda bundle. Unset (the
 * default): no cache is built, the bundle is as before. It has to be the Node and V8 the function
 * runs (nodejs24.x on arm64: an arm64 build of the same Node release, run natively or under an
 * emulator); an entry built by any other is rejected by V8 at run time and the module compiled
 * as without a cache, never a failure (docs/deploy.md, "Node's compile cache").
 */
export const COMPILE_CACHE_NODE_ENV = 'STRATUS_COMPILE_CACHE_NODE';

/**
 * V8 flags among those Lambda's Node runtime starts `node` with: `--expose-gc` changes V8's flag
 * hash, and a cache built without it is rejected; the heap sizes it also passes do not change it.
 */
export const LAMBDA_NODE_FLAGS = ['--expose-gc', '--max-http-header-size', '81920'] as const;

/** Where Lambda unpacks a function's code; the cache's keys are paths relative to it. */
const TASK_ROOT = 'var/task';

/**
 * Builds the compile cache for the bundle in `outDir` with the given `node` and writes it to
 * `outDir/compile-cache/`: a cold start of the bundle in a copy laid out as Lambda lays it out
 * (`<root>/var/task`, the temp directory `<root>/tmp`), which enables the cache exactly as the
 * deployed entry does (functions/handlers/compile-cache.ts), then imports every other chunk so
 * that the first requests' lazy imports find theirs too, and flushes. Returns the cache's size.
 */
export function buildCompileCache(outDir: string, node: string): { files: number; bytes: number } {
  const root = mkdtempSync(path.join(tmpdir(), 'stratus-compile-cache-'));
  try {
    const task = path.join(root, TASK_ROOT);
    cpSync(outDir, task, { recursive: true, filter: (src) => !src.endsWith('.map') });
    const cache = path.join(task, SHIPPED_COMPILE_CACHE_DIR);
    mkdirSync(cache);
    mkdirSync(path.join(root, 'tmp'));
    const chunks = readdirSync(task).filter((f) => f.endsWith('.mjs') && f !== 'index.mjs');
    const status = execFileSync(node, [...LAMBDA_NODE_FLAGS, '--input-type=module', '-e', generatorScript(task, chunks)], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH, TMPDIR: path.join(root, 'tmp'), AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    }).trim();
    const files = readdirSync(cache);
    if (files.length === 0) throw new Error(`${COMPILE_CACHE_NODE_ENV}=${node} wrote no compile cache (the entry said: ${status})`);
    cpSync(cache, path.join(outDir, SHIPPED_COMPILE_CACHE_DIR), { recursive: true });
    return { files: files.length, bytes: files.reduce((sum, f) => sum + statSync(path.join(cache, f)).size, 0) };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** The generating process: Lambda's globals, the entry, then each chunk (one that throws on its own still leaves its cache entry). */
function generatorScript(task: string, chunks: string[]): string {
  return [
    "import * as nodeModule from 'node:module';",
    'globalThis.awslambda = { streamifyResponse: (h) => h, HttpResponseStream: { from: (s) => s } };',
    `const { compileCache } = await import(${JSON.stringify(path.join(task, 'index.mjs'))});`,
    `for (const chunk of ${JSON.stringify(chunks)}) await import(${JSON.stringify(`${task}/`)} + chunk).catch(() => {});`,
    // Absent from a Node without a compile cache: the check after this process then fails the build.
    'nodeModule.flushCompileCache?.();',
    'process.stdout.write(compileCache);',
    'process.exit(0);',
  ].join('\n');
}
