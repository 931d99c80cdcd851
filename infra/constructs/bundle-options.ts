import type { BuildOptions, Metafile } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { copyFileSync, cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildCompileCache, COMPILE_CACHE_NODE_ENV } from './compile-cache.ts';
import { lambdaEntry, lambdaEntryPath } from './lambda-entry-plugin.ts';
import { zodEnglishLocaleOnly } from './zod-locales-plugin.ts';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Node major the Lambda functions run on (nodejs24.x); the bundle targets it. */
export const NODE_TARGET = 'node24';

/**
 * How the Lambda entry files are bundled, shared by the CDK app (bundleLambda below), the bundle
 * benchmark and the bundle tests, so the measured files are the deployed ones. Everything is
 * bundled, the AWS SDK included: the pinned versions ship, not whatever the runtime carries. ESM
 * output needs a `require` for the few CommonJS dependencies that call it. ESM code splitting
 * puts whatever is reached only through a dynamic `import()` in its own chunk, read and compiled
 * only when first imported (docs/deploy.md, "Cold start and bundle size").
 */
export const LAMBDA_BUNDLE = {
  format: 'esm',
  platform: 'node',
  target: NODE_TARGET,
  minify: true,
  sourcemap: true,
  sourcesContent: false,
  mainFields: ['module', 'main'],
  banner: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
  /**
   * Left out of the bundle: the Bedrock SDK's default credential resolver imports this package,
   * and Stratus never uses that resolver (functions/handlers/model-client.ts passes its own
   * credentials), so it would be 60 KB never loaded.
   */
  external: ['@aws-sdk/credential-providers'],
} as const;

/** Lambda entry files, relative to the repo root. */
export const ENTRIES = {
  api: 'functions/handlers/api.ts',
  cron: 'functions/handlers/cron.ts',
  githubWorker: 'functions/handlers/github-worker.ts',
  egressForwarder: 'functions/handlers/egress-forwarder.ts',
} as const;

/**
 * Files the bundle loads at run time from its own folder: the bash grammar for the read-only
 * command classifier and the tree-sitter runtime (web-tree-sitter looks beside its script).
 */
export const BUNDLE_ASSETS = ['node_modules/web-tree-sitter/web-tree-sitter.wasm', 'node_modules/tree-sitter-bash/tree-sitter-bash.wasm'] as const;

/** The web console's built files (`npm run build:console`), shipped as `console/` beside the API bundle. */
export const CONSOLE_BUILD_DIR = 'dist/console';

/** Copies BUNDLE_ASSETS beside a bundle. */
export function copyBundleAssets(outDir: string): void {
  for (const asset of BUNDLE_ASSETS) copyFileSync(path.join(REPO_ROOT, asset), path.join(outDir, path.basename(asset)));
}

/**
 * The esbuild options for one entry (relative to the repo root, or absolute): `index.mjs` (the handler file Lambda loads) and its chunks,
 * all in `outDir` itself, beside the wasm assets (web-tree-sitter looks beside its own chunk).
 */
export function lambdaBuildOptions(entry: string, outDir: string): BuildOptions {
  return {
    entryPoints: { index: lambdaEntryPath(path.resolve(REPO_ROOT, entry)) },
    // The metafile's paths are relative to this folder, whatever the calling process's.
    absWorkingDir: REPO_ROOT,
    bundle: true,
    splitting: true,
    outdir: outDir,
    outExtension: { '.js': '.mjs' },
    chunkNames: '[name]-[hash]',
    format: LAMBDA_BUNDLE.format,
    platform: LAMBDA_BUNDLE.platform,
    target: LAMBDA_BUNDLE.target,
    minify: LAMBDA_BUNDLE.minify,
    sourcemap: LAMBDA_BUNDLE.sourcemap,
    sourcesContent: LAMBDA_BUNDLE.sourcesContent,
    mainFields: [...LAMBDA_BUNDLE.mainFields],
    banner: { js: LAMBDA_BUNDLE.banner },
    external: [...LAMBDA_BUNDLE.external],
    plugins: [lambdaEntry(REPO_ROOT), zodEnglishLocaleOnly()],
    metafile: true,
    logLevel: 'warning',
  };
}

/**
 * Bundles one Lambda entry into `outDir` with its assets, synchronously (the CDK app's local
 * bundling hook is synchronous), and returns esbuild's metafile. `assetDirs` maps repo-relative
 * folders to copy beside the bundle (the API function's `console/`). With a Node binary in
 * STRATUS_COMPILE_CACHE_NODE (or `compileCacheNode`), the bundle's compile cache is built with
 * it and shipped in `compile-cache/` (infra/constructs/compile-cache.ts); without, none is.
 */
export function bundleLambda(
  entry: string,
  outDir: string,
  assetDirs: Readonly<Record<string, string>> = {},
  compileCacheNode = process.env[COMPILE_CACHE_NODE_ENV],
): Metafile {
  const metafile = buildInChildProcess(entry, outDir);
  copyBundleAssets(outDir);
  for (const [from, to] of Object.entries(assetDirs)) cpSync(path.join(REPO_ROOT, from), path.join(outDir, to), { recursive: true });
  if (compileCacheNode) buildCompileCache(outDir, compileCacheNode);
  return metafile;
}

/**
 * esbuild runs plugins only in its asynchronous `build`, and the CDK app's bundling hook is
 * synchronous, so the build runs in a child `node` (build-lambda.ts, loaded through tsx) that
 * bundleLambda waits for.
 */
function buildInChildProcess(entry: string, outDir: string): Metafile {
  const scratch = mkdtempSync(path.join(tmpdir(), 'stratus-metafile-'));
  try {
    const metafilePath = path.join(scratch, 'metafile.json');
    execFileSync(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'infra/constructs/build-lambda.ts'), entry, outDir, metafilePath], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    return JSON.parse(readFileSync(metafilePath, 'utf8')) as Metafile;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * The entry file and every chunk it reaches through static imports, and through the entry's own
 * dynamic import of the real entry (infra/constructs/lambda-entry-plugin.ts): what a cold start
 * loads, as keys of `metafile.outputs` (paths relative to REPO_ROOT).
 * @internal for the bundle's test and benchmark
 */
export function startFiles(metafile: Metafile, entry: string): string[] {
  const key = (f: string) => Object.keys(metafile.outputs).find((o) => path.resolve(REPO_ROOT, o) === path.resolve(REPO_ROOT, f))!;
  const first = key(entry);
  const seen = new Set<string>([first]);
  for (const file of seen) {
    for (const imp of metafile.outputs[file]!.imports) {
      const atStart = imp.kind === 'import-statement' || (file === first && imp.kind === 'dynamic-import');
      if (atStart && !imp.external) seen.add(key(imp.path));
    }
  }
  return [...seen];
}
