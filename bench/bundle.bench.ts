import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { readFileSync } from 'node:fs';
import { copyBundleAssets, ENTRIES, LAMBDA_BUNDLE, REPO_ROOT } from '../infra/constructs/bundle-options.ts';

const IMPORT_RUNS = 5;

/**
 * Builds the API and cron functions exactly as the CDK app bundles them (infra/constructs/bundle-options.ts)
 * and reports the bundle size and the time a fresh `node` process takes to import the built
 * file: the part of a cold start the code controls. The Lambda runtime's `awslambda` globals are
 * defined first, as the runtime does.
 */
export async function run(): Promise<void> {
  const outDir = mkdtempSync(path.join(tmpdir(), 'stratus-bundle-'));
  try {
    for (const [name, entry] of Object.entries(ENTRIES)) {
      const outfile = path.join(outDir, name, 'index.mjs');
      const started = performance.now();
      const result = await build({
        ...LAMBDA_BUNDLE,
        mainFields: [...LAMBDA_BUNDLE.mainFields],
        external: [...LAMBDA_BUNDLE.external],
        entryPoints: [path.join(REPO_ROOT, entry)],
        bundle: true,
        outfile,
        banner: { js: LAMBDA_BUNDLE.banner },
        metafile: true,
        logLevel: 'silent',
      });
      const buildMs = performance.now() - started;
      copyBundleAssets(path.dirname(outfile));
      const bytes = statSync(outfile).size;
      const gzip = gzipSync(readFileSync(outfile)).length;
      const inputs = Object.keys(result.metafile.inputs).length;
      const heaviest = heaviestPackages(result.metafile.outputs, 4);
      const times = Array.from({ length: IMPORT_RUNS }, () => importMs(outfile)).sort((a, b) => a - b);
      console.log(
        `${name.padEnd(5)} bundle ${kb(bytes)} KB (${kb(gzip)} KB gzipped, ${inputs} modules), built in ${buildMs.toFixed(0)} ms; ` +
          `import in a fresh node: median ${times[Math.floor(IMPORT_RUNS / 2)]!.toFixed(1)} ms, min ${times[0]!.toFixed(1)} ms, max ${times.at(-1)!.toFixed(1)} ms (${IMPORT_RUNS} runs, node ${process.versions.node})`,
      );
      console.log(`      largest parts: ${heaviest.map(([pkg, b]) => `${pkg} ${kb(b)} KB`).join(', ')}`);
    }
  } finally {
    rmSync(outDir, { recursive: true, force: true });
  }
}

/** Bytes in the output per npm package (or "own code"), largest first. */
function heaviestPackages(outputs: Record<string, { inputs: Record<string, { bytesInOutput: number }> }>, n: number): [string, number][] {
  const totals = new Map<string, number>();
  for (const output of Object.values(outputs)) {
    for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
      const match = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input);
      const key = match ? match[1]! : 'own code';
      totals.set(key, (totals.get(key) ?? 0) + bytesInOutput);
    }
  }
  return [...totals.entries()].sort((a, b) => b[1] - a[1]).slice(0, n);
}

function importMs(file: string): number {
  const script = [
    'globalThis.awslambda = { streamifyResponse: (h) => h, HttpResponseStream: { from: (s) => s } };',
    'const t = performance.now();',
    `await import(${JSON.stringify(path.resolve(file))});`,
    'process.stdout.write(String(performance.now() - t));',
  ].join('\n');
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
  });
  return Number(out);
}

function kb(bytes: number): string {
  return (bytes / 1024).toFixed(0);
}
