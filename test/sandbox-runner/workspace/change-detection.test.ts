import { mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_WORKSPACE_LIMITS } from '../../../sandbox-runner/common/workspace-limits.ts';
import { LocalCopy } from '../../../sandbox-runner/workspace/local-copy.ts';
import { makeTempDir } from '../../support/temp-dir.ts';

describe('change detection by size and mtime', () => {
  const temps: { cleanup(): void }[] = [];
  afterEach(() => {
    for (const t of temps.splice(0)) t.cleanup();
  });
  const copy = () => {
    const temp = makeTempDir('stratus-scan-');
    temps.push(temp);
    return new LocalCopy(temp.dir, DEFAULT_WORKSPACE_LIMITS);
  };

  it('hashes only files whose size, mtime or mode changed', async () => {
    const local = copy();
    mkdirSync(local.tree, { recursive: true });
    writeFileSync(path.join(local.tree, 'a.txt'), 'aaaa');
    writeFileSync(path.join(local.tree, 'b.txt'), 'bbbb');
    const old = new Date(Date.now() - 60_000);
    utimesSync(path.join(local.tree, 'a.txt'), old, old);
    utimesSync(path.join(local.tree, 'b.txt'), old, old);
    const first = await local.scan();
    // Same size and mtime: the recorded hash is trusted, so a content change hidden that way is
    // not seen (this is the contract; the racy window below covers the only way it can happen).
    writeFileSync(path.join(local.tree, 'a.txt'), 'AAAA');
    utimesSync(path.join(local.tree, 'a.txt'), old, old);
    writeFileSync(path.join(local.tree, 'b.txt'), 'bbbbb');
    const second = await local.scan(first);
    expect(second.entries['a.txt']).toEqual(first.entries['a.txt']);
    expect(second.entries['b.txt']).not.toEqual(first.entries['b.txt']);
  });

  it('does not trust the stat of a file modified within a timestamp tick of being recorded', async () => {
    const local = copy();
    mkdirSync(local.tree, { recursive: true });
    const file = path.join(local.tree, 'racy.txt');
    writeFileSync(file, 'one!');
    // An mtime at (or after) the moment of recording: a same-size rewrite in the same tick
    // would keep it, so it must be hashed again next time.
    const tick = new Date(Date.now() + 1_000);
    utimesSync(file, tick, tick);
    const first = await local.scan();
    expect(first.stats['racy.txt']!.mtimeMs).toBe(-1);
    writeFileSync(file, 'two!');
    utimesSync(file, tick, tick);
    const second = await local.scan(first);
    expect(second.entries['racy.txt']).not.toEqual(first.entries['racy.txt']);
  });
});
