import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * `npm run bench [-- name-filter]`: runs every `bench/*.bench.ts` in turn. Each module exports
 * `run(): Promise<void>` and prints its own figures.
 */
const dir = path.dirname(fileURLToPath(import.meta.url));
const filter = process.argv[2];
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.bench.ts') && (!filter || f.includes(filter)))
  .sort();
for (const file of files) {
  console.log(`\n## ${file.replace('.bench.ts', '')}`);
  const mod = (await import(pathToFileURL(path.join(dir, file)).href)) as { run: () => Promise<void> };
  await mod.run();
}
process.exit(0);
