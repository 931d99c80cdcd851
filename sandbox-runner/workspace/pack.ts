import { copyFileSync, createReadStream, promises as fs, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import type { Entries } from './manifest.ts';

/**
 * A pack is every distinct file body of a version, concatenated, with an index of
 * sha256 → [offset, size]. One object instead of one per file is what makes a cold start of
 * 10,000 files one GET; uncompressed so a single body can be fetched with a range request.
 */
export interface PackPlan {
  index: Record<string, [number, number]>;
  size: number;
  /** sha256 → a path holding that body, in pack order. */
  order: [string, string][];
}

export function planPack(entries: Entries): PackPlan {
  const index: Record<string, [number, number]> = {};
  const order: [string, string][] = [];
  let offset = 0;
  for (const p of Object.keys(entries).sort()) {
    const e = entries[p]!;
    if (e.type !== 'file' || index[e.sha256]) continue;
    index[e.sha256] = [offset, e.size];
    order.push([e.sha256, p]);
    offset += e.size;
  }
  return { index, size: offset, order };
}

/** Streams the pack's bytes from the files of `tree`. */
export function packStream(tree: string, plan: PackPlan): Readable {
  const out = new PassThrough();
  void (async () => {
    for (const [, rel] of plan.order) {
      for await (const chunk of createReadStream(path.join(tree, rel))) {
        if (out.destroyed) return;
        if (!out.write(chunk)) await drained(out);
      }
    }
    out.end();
  })().catch((err: unknown) => out.destroy(err as Error));
  return out;
}

/** Waits for the reader, or for the stream's end: a request that failed never drains. */
function drained(out: PassThrough): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      out.off('drain', done);
      out.off('close', done);
      resolve();
    };
    out.on('drain', done);
    out.on('close', done);
  });
}

const SMALL_BODY = 1024 * 1024;

/** Writes every file of `entries` from a pack stream into `tree` (which holds the directories already). */
export async function extractPack(source: Readable, tree: string, entries: Entries, index: Record<string, [number, number]>): Promise<void> {
  const pathsBySha = new Map<string, string[]>();
  for (const [p, e] of Object.entries(entries)) {
    if (e.type !== 'file') continue;
    const list = pathsBySha.get(e.sha256);
    if (list) list.push(p);
    else pathsBySha.set(e.sha256, [p]);
  }
  const wanted = [...pathsBySha.keys()].sort((a, b) => index[a]![0] - index[b]![0]);
  const reader = createExactReader(source);
  let position = 0;
  for (const sha of wanted) {
    const [offset, size] = index[sha]!;
    await reader.skip(offset - position);
    const [first, ...copies] = pathsBySha.get(sha)!;
    const target = path.join(tree, first!);
    if (size <= SMALL_BODY) {
      // Synchronous writes: for thousands of small files, promise overhead dominates the I/O.
      const parts: Buffer[] = [];
      await reader.read(size, async (chunk) => {
        parts.push(chunk);
      });
      writeFileSync(target, parts.length === 1 ? parts[0]! : Buffer.concat(parts));
    } else {
      const handle = await fs.open(target, 'w');
      try {
        await reader.read(size, (chunk) => handle.write(chunk).then(() => undefined));
      } finally {
        await handle.close();
      }
    }
    position = offset + size;
    for (const copy of copies) copyFileSync(target, path.join(tree, copy));
  }
  source.destroy();
}

/** Pulls exact byte counts out of a stream of chunks. */
function createExactReader(source: Readable) {
  const iterator = source[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  let pending: Buffer = Buffer.alloc(0);
  const take = async (n: number, sink?: (chunk: Buffer) => Promise<void>) => {
    let left = n;
    while (left > 0) {
      if (pending.length === 0) {
        const next = await iterator.next();
        if (next.done) throw new Error(`Snapshot pack ended ${left} bytes early`);
        pending = next.value;
      }
      const part = pending.subarray(0, left);
      pending = pending.subarray(part.length);
      left -= part.length;
      if (sink) await sink(part);
    }
  };
  return { skip: (n: number) => take(n), read: take };
}
