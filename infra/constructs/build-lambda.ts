import { build } from 'esbuild';
import { writeFileSync } from 'node:fs';
import { lambdaBuildOptions } from './bundle-options.ts';

/**
 * `node --import tsx infra/constructs/build-lambda.ts ENTRY OUT_DIR METAFILE`: runs esbuild's
 * asynchronous build (plugins only run there) for bundleLambda, which the CDK app calls from a
 * synchronous bundling hook, and writes the metafile as JSON to METAFILE.
 */
const [entry, outDir, metafilePath] = process.argv.slice(2);
if (!entry || !outDir || !metafilePath) throw new Error('usage: build-lambda.ts ENTRY OUT_DIR METAFILE');
const result = await build(lambdaBuildOptions(entry, outDir));
writeFileSync(metafilePath, JSON.stringify(result.metafile));
