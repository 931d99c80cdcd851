import { lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { extract, pack, type Header } from 'tar-stream';
import { CliError, EXIT } from './exit-codes.ts';

/** Folders `stratus new --from` leaves out: version control and installed dependencies. */
const SKIPPED = new Set(['.git', 'node_modules']);

/** A folder as a tar.gz, in memory (workspaces are bounded; the server refuses one past its limit). */
export async function packDirectory(dir: string): Promise<Buffer> {
  const tar = pack();
  const chunks: Buffer[] = [];
  tar.on('data', (c: unknown) => {
    chunks.push(c as Buffer);
  });
  const done = new Promise<void>((resolve, reject) => {
    tar.on('end', resolve);
    tar.on('error', reject);
  });
  const add = (header: Partial<Header> & { name: string }, body?: Buffer) =>
    new Promise<void>((resolve, reject) => tar.entry(header as Header, body ?? '', (err) => (err ? reject(err) : resolve())));
  const walk = async (rel: string) => {
    for (const name of readdirSync(path.join(dir, rel)).sort()) {
      if (SKIPPED.has(name)) continue;
      const relPath = rel ? `${rel}/${name}` : name;
      const full = path.join(dir, relPath);
      const st = lstatSync(full);
      if (st.isDirectory()) {
        await add({ name: `${relPath}/`, type: 'directory', mode: st.mode & 0o777 });
        await walk(relPath);
      } else if (st.isSymbolicLink()) {
        await add({ name: relPath, type: 'symlink', linkname: readlinkSync(full), mode: 0o777 });
      } else if (st.isFile()) {
        await add({ name: relPath, type: 'file', mode: st.mode & 0o777 }, readFileSync(full));
      }
    }
  };
  try {
    await walk('');
  } catch (err) {
    throw new CliError(`Cannot read ${dir}: ${(err as Error).message}`, EXIT.usage);
  }
  tar.finalize();
  await done;
  return gzipSync(Buffer.concat(chunks));
}

/** Writes a tar.gz into `dir`, refusing entries that would land outside it. Returns the files written. */
export async function unpackInto(archive: Buffer, dir: string): Promise<number> {
  const root = path.resolve(dir);
  mkdirSync(root, { recursive: true });
  const untar = extract();
  let files = 0;
  const consume = (async () => {
    for await (const entry of untar) {
      const h = entry.header;
      const target = path.resolve(root, h.name);
      if (target !== root && !target.startsWith(`${root}${path.sep}`)) throw new CliError(`The archive holds a path outside the folder: ${h.name}`);
      const chunks: Buffer[] = [];
      for await (const c of entry) chunks.push(c as Buffer);
      if (h.type === 'directory') mkdirSync(target, { recursive: true });
      else if (h.type === 'symlink' && h.linkname) {
        mkdirSync(path.dirname(target), { recursive: true });
        symlinkSync(h.linkname, target);
      } else if (h.type === 'file') {
        mkdirSync(path.dirname(target), { recursive: true });
        writeFileSync(target, Buffer.concat(chunks), { mode: (h.mode ?? 0o644) & 0o777 });
        files++;
      }
    }
  })();
  untar.end(gunzipSync(archive));
  await consume;
  return files;
}
