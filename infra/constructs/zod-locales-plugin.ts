import type { Plugin } from 'esbuild';
import path from 'node:path';

const NAMESPACE = 'zod-english-locale';

/**
 * zod v4 re-exports its 60-odd message locales as a namespace (`z.locales`, `core.locales`), and
 * @hono/zod-openapi hands the whole `z` namespace to `extendZodWithOpenApi(z)`, so the bundler
 * keeps every locale: 258 KB on the API's start path. Stratus only ever uses English, which zod
 * registers itself from `locales/en.js` (imported directly by `classic/schemas.js` on the first
 * schema), so zod's locales index is resolved to a module that exports `en` alone. A Stratus
 * file asking for another locale (`zod/locales`, `zod/v4/locales`) fails the build instead of
 * getting a namespace without it.
 */
export function zodEnglishLocaleOnly(): Plugin {
  return {
    name: 'zod-english-locale-only',
    setup(build) {
      build.onResolve({ filter: /^zod(\/v4)?(\/core)?\/locales(\/index\.js)?$/ }, (args) => ({
        errors: [{ text: `${args.path}: the Lambda bundle keeps only zod's English locale (infra/constructs/zod-locales-plugin.ts)` }],
      }));
      build.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) => {
        if (!/[\\/]node_modules[\\/]zod[\\/]v4[\\/](classic|core)$/.test(args.resolveDir)) return undefined;
        return { path: path.join(args.resolveDir, '../locales/en.js'), namespace: NAMESPACE };
      });
      build.onLoad({ filter: /.*/, namespace: NAMESPACE }, (args) => ({
        contents: `export { default as en } from ${JSON.stringify(args.path)};`,
        resolveDir: path.dirname(args.path),
        loader: 'js',
      }));
    },
  };
}
