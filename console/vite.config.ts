import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

/**
 * The web console: Preact components compiled by Vite's own JSX transform (no plugin needed),
 * built into dist/console with hashed asset names; the API serves that folder at /console.
 */
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('../dist/console', import.meta.url)),
    emptyOutDir: true,
    // The page's CSP allows no inline script or data: module; keep every asset a file.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    target: 'es2022',
    reportCompressedSize: false,
  },
  logLevel: 'warn',
});
