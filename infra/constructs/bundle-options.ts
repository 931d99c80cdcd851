import { copyFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Node major the Lambda functions run on (nodejs24.x); the bundle targets it. */
export const NODE_TARGET = 'node24';

/**
 * How the Lambda entry files are bundled, shared by the CDK app (NodejsFunction) and the bundle
 * benchmark so the measured file is the deployed one. Everything is bundled, the AWS SDK
 * included: the pinned versions ship, not whatever the runtime carries. ESM output needs a
 * `require` for the few CommonJS dependencies that call it.
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
} as const;

/**
 * Files the bundle loads at run time from its own folder: the bash grammar for the read-only
 * command classifier and the tree-sitter runtime (web-tree-sitter looks beside its script).
 */
export const BUNDLE_ASSETS = ['node_modules/web-tree-sitter/web-tree-sitter.wasm', 'node_modules/tree-sitter-bash/tree-sitter-bash.wasm'] as const;

/** The web console's built files (scripts/build-console.sh), shipped as `console/` beside the API bundle. */
export const CONSOLE_BUILD_DIR = 'dist/console';

/** Copies BUNDLE_ASSETS beside a bundle (for tests and the benchmark; the CDK app uses a bundling hook). */
export function copyBundleAssets(outDir: string): void {
  for (const asset of BUNDLE_ASSETS) copyFileSync(path.join(REPO_ROOT, asset), path.join(outDir, path.basename(asset)));
}
