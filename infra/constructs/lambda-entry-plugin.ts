import type { Plugin } from 'esbuild';
import path from 'node:path';

const NAMESPACE = 'stratus-lambda-entry';

/** What a bundle's entry is named in esbuild's entryPoints so that lambdaEntry() builds it. */
export function lambdaEntryPath(entry: string): string {
  return `${NAMESPACE}:${entry}`;
}

/**
 * A Lambda bundle's `index.mjs` is a small module that turns on the compile cache shipped
 * beside it (functions/handlers/compile-cache.ts) and then imports the real entry with a
 * dynamic `import()`, re-exporting its `handler` (and `compileCache`, what the enabler said). The import has to be dynamic: Node compiles
 * every module of a static import graph before it runs any of them, so a cache enabled by a
 * statically imported module would come too late for the rest. esbuild puts the real entry
 * and what it imports statically in chunks of their own; startFiles counts them as start files.
 */
export function lambdaEntry(repoRoot: string): Plugin {
  const enabler = path.join(repoRoot, 'functions/handlers/compile-cache.ts');
  return {
    name: 'stratus-lambda-entry',
    setup(build) {
      build.onResolve({ filter: new RegExp(`^${NAMESPACE}:`) }, (args) => ({ path: args.path.slice(NAMESPACE.length + 1), namespace: NAMESPACE }));
      build.onLoad({ filter: /.*/, namespace: NAMESPACE }, (args) => ({
        contents: [
          `import { fileURLToPath } from 'node:url';`,
          `import { enableShippedCompileCache } from ${JSON.stringify(enabler)};`,
          // Exported for the benchmark and for whoever wonders whether the cache was on.
          `export const compileCache = enableShippedCompileCache(fileURLToPath(new URL('.', import.meta.url)));`,
          `export const { handler } = await import(${JSON.stringify(args.path)});`,
        ].join('\n'),
        resolveDir: repoRoot,
        loader: 'js',
      }));
    },
  };
}
