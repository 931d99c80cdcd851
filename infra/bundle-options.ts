import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

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
} as const;

/** Lambda entry files, relative to the repo root. */
export const ENTRIES = {
  api: 'functions/handlers/api.ts',
  cron: 'functions/handlers/cron.ts',
} as const;
