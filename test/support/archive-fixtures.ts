import { Readable } from 'node:stream';
import { createGunzip, gzipSync } from 'node:zlib';
import { extract, pack, type Header } from 'tar-stream';

export type TarEntry = Partial<Header> & { name: string; body?: Buffer | string };

/** Builds a tar.gz in memory from explicit headers (so tests can also build hostile archives). */
export async function makeTarGz(entries: TarEntry[]): Promise<Buffer> {
  const tar = pack();
  const chunks: Buffer[] = [];
  tar.on('data', (c: unknown) => {
    chunks.push(c as Buffer);
  });
  const done = new Promise<void>((resolve) => tar.on('end', () => resolve()));
  for (const { body, ...header } of entries) {
    await new Promise<void>((resolve, reject) => tar.entry(header as Header, body ?? '', (err) => (err ? reject(err) : resolve())));
  }
  tar.finalize();
  await done;
  return gzipSync(Buffer.concat(chunks));
}

export interface ReadEntry {
  name: string;
  type: string;
  mode: number;
  linkname?: string;
  body: Buffer;
}

/** Reads every entry of a tar.gz. */
export async function readTarGz(data: Buffer): Promise<ReadEntry[]> {
  const untar = extract();
  const out: ReadEntry[] = [];
  const consume = (async () => {
    for await (const entry of untar) {
      const chunks: Buffer[] = [];
      for await (const c of entry) chunks.push(c as Buffer);
      const h = entry.header;
      out.push({
        name: h.name,
        type: h.type ?? 'file',
        mode: (h.mode ?? 0) & 0o7777,
        ...(h.linkname ? { linkname: h.linkname } : {}),
        body: Buffer.concat(chunks),
      });
    }
  })();
  Readable.from([data]).pipe(createGunzip()).pipe(untar);
  await consume;
  return out;
}
