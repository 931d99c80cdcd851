import { createReadStream, createWriteStream } from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { pack } from 'tar-stream';
import type { Entries } from './manifest.ts';

/** Writes the tree's `entries` as a tar.gz to `file` (paths relative, links as links, modes kept). */
export async function exportTarGz(tree: string, entries: Entries, file: string): Promise<void> {
  const tar = pack();
  const writing = pipeline(tar, createGzip({ level: 6 }), createWriteStream(file));
  try {
    for (const name of Object.keys(entries).sort()) {
      const e = entries[name]!;
      if (e.type === 'dir') {
        await addEntry(tar, { name, type: 'directory', mode: e.mode });
      } else if (e.type === 'symlink') {
        await addEntry(tar, { name, type: 'symlink', linkname: e.target, mode: 0o777 });
      } else {
        await new Promise<void>((resolve, reject) => {
          const sink = tar.entry({ name, type: 'file', size: e.size, mode: e.mode }, (err) => (err ? reject(err) : resolve()));
          createReadStream(path.join(tree, name)).on('error', reject).pipe(sink);
        });
      }
    }
    tar.finalize();
  } catch (err) {
    tar.destroy(err as Error);
  }
  await writing;
}

function addEntry(tar: ReturnType<typeof pack>, header: Parameters<ReturnType<typeof pack>['entry']>[0]): Promise<void> {
  return new Promise((resolve, reject) => tar.entry(header, (err) => (err ? reject(err) : resolve())));
}
