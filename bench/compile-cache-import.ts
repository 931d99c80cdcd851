import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SHIPPED_COMPILE_CACHE_DIR } from '../functions/handlers/compile-cache.ts';
import { buildCompileCache, LAMBDA_NODE_FLAGS } from '../infra/constructs/compile-cache.ts';

/** A Node binary of the Lambda runtime's major (24), to measure the compile cache with; this machine's Node may predate it. */
export const BENCH_NODE24_ENV = 'STRATUS_BENCH_NODE24';

const RUNS = 11;

interface Variant {
  readonly name: string;
  /** The layout's root: the bundle is at `<root>/var/task`, the temp directory at `<root>/tmp`, as on Lambda. */
  readonly root: string;
  readonly flags: readonly string[];
  /** A compile cache in an empty temp directory, written by the process itself (`NODE_COMPILE_CACHE`, then a flush). */
  readonly tmpCache?: boolean;
  /** A root whose shipped cache is copied into this one before each run (see coldImport). */
  readonly restoreCacheFrom?: string;
}

/**
 * The API bundle's cold import in Node 24 as Lambda runs it (its V8 flags, `--enable-source-maps`,
 * the bundle at `/var/task`, an empty `/tmp` each time): without a compile cache, with the one
 * bundleLambda ships when STRATUS_COMPILE_CACHE_NODE is set (built here with the same binary),
 * with that cache when the runtime's V8 flags differ from the build's (V8 rejects every entry,
 * as it does a cache from another V8: the cost of a mismatch), and with a cache Node writes into the empty temp directory itself
 * (what enabling it without shipping one would do). Runs alternate between the variants.
 */
export function printCompileCacheImport(bundleDir: string): void {
  const node = process.env[BENCH_NODE24_ENV];
  if (!node) {
    console.log(
      `      compile cache: not measured; set ${BENCH_NODE24_ENV}=/path/to/node (Node 24, the Lambda runtime's major) to compare the cold import with and without it`,
    );
    return;
  }
  const scratch = mkdtempSync(path.join(tmpdir(), 'stratus-bench-cc-'));
  try {
    const plain = layOut(scratch, 'plain', bundleDir, (src) => path.basename(src) !== SHIPPED_COMPILE_CACHE_DIR);
    const cached = layOut(scratch, 'cached', bundleDir, () => true);
    const built = buildCompileCache(path.join(cached, 'var/task'), node);
    const rejected = layOut(scratch, 'rejected', path.join(cached, 'var/task'), () => true);
    const lambdaFlags = [...LAMBDA_NODE_FLAGS, '--enable-source-maps'];
    const variants: Variant[] = [
      { name: 'no compile cache', root: plain, flags: lambdaFlags },
      { name: 'shipped compile cache', root: cached, flags: lambdaFlags },
      // Any flag outside V8's defaults changes its flag hash; the stack size changes nothing else here.
      { name: 'shipped cache, V8 flags differ (all rejected)', root: rejected, flags: [...lambdaFlags, '--stack-size=1000'], restoreCacheFrom: cached },
      { name: 'cache written to the empty /tmp at start', root: plain, flags: lambdaFlags, tmpCache: true },
    ];
    const runs = variants.map(() => [] as { wall: number; cpu: number; cache: string }[]);
    for (let i = 0; i < RUNS; i++) {
      for (const [n, v] of variants.entries()) runs[n]!.push(coldImport(node, v));
    }
    const version = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
    console.log(
      `      compile cache (node ${version}, median of ${RUNS} alternating cold imports, Lambda's V8 flags; cache ${built.files} files, ${(built.bytes / 1024).toFixed(0)} KB):`,
    );
    variants.forEach((v, n) => {
      const wall = median(runs[n]!.map((r) => r.wall));
      const cpu = median(runs[n]!.map((r) => r.cpu));
      console.log(`        ${v.name.padEnd(48)} ${wall.toFixed(0)} ms wall, ${cpu.toFixed(0)} ms CPU (entry: ${runs[n]![0]!.cache})`);
    });
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** A copy of the bundle, source maps included, at `<root>/var/task` (the cache's keys are paths relative to it). */
function layOut(scratch: string, name: string, bundleDir: string, filter: (src: string) => boolean): string {
  const root = path.join(scratch, name);
  cpSync(bundleDir, path.join(root, 'var/task'), { recursive: true, filter });
  return root;
}

/**
 * One fresh process importing the bundle, its temp directory emptied first as every cold start
 * finds it, and its shipped cache put back where a variant asks: Node writes the entries it
 * compiled anew into the cache folder (on Node 24.22 even in a process killed right after the
 * import), so after a rejection the shipped files here, in a writable folder, would be
 * replaced by entries that match (Lambda's code folder is read-only).
 */
function coldImport(node: string, v: Variant): { wall: number; cpu: number; cache: string } {
  const tmp = path.join(v.root, 'tmp');
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp);
  if (v.restoreCacheFrom) {
    const cache = path.join(v.root, 'var/task', SHIPPED_COMPILE_CACHE_DIR);
    rmSync(cache, { recursive: true, force: true });
    cpSync(path.join(v.restoreCacheFrom, 'var/task', SHIPPED_COMPILE_CACHE_DIR), cache, { recursive: true });
  }
  const script = [
    "import { flushCompileCache } from 'node:module';",
    'globalThis.awslambda = { streamifyResponse: (h) => h, HttpResponseStream: { from: (s) => s } };',
    'const t = performance.now(); const c = process.cpuUsage();',
    `const { compileCache } = await import(${JSON.stringify(path.join(v.root, 'var/task/index.mjs'))});`,
    v.tmpCache ? 'flushCompileCache();' : '',
    'const u = process.cpuUsage(c);',
    'process.stdout.write(JSON.stringify({ wall: performance.now() - t, cpu: (u.user + u.system) / 1000, cache: compileCache }));',
  ].join('\n');
  const stdout = execFileSync(node, [...v.flags, '--input-type=module', '-e', script], {
    encoding: 'utf8',
    env: {
      PATH: process.env.PATH,
      TMPDIR: tmp,
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      ...(v.tmpCache ? { NODE_COMPILE_CACHE: path.join(tmp, 'node-compile-cache') } : {}),
    },
  });
  return JSON.parse(stdout) as { wall: number; cpu: number; cache: string };
}

function median(xs: number[]): number {
  return [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
}
