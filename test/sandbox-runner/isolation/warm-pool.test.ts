import { describe, expect, it } from 'vitest';
import { WarmPool } from '../../../sandbox-runner/isolation/warm-pool.ts';

/** The pool's rules on plain items: what it hands out once, and what it disposes of. */
function pool(opts: { maxTotal?: number; maxAgeMs?: number } = {}) {
  const disposed: string[] = [];
  const errors: string[] = [];
  const warm = new WarmPool<string>({
    maxTotal: opts.maxTotal ?? 4,
    maxAgeMs: opts.maxAgeMs ?? 60_000,
    dispose: async (item) => void disposed.push(item),
    onError: (message) => void errors.push(message),
  });
  return { warm, disposed, errors };
}

const settle = () => new Promise((r) => setTimeout(r, 5));

describe('the pool of sandboxes started ahead', () => {
  it('hands a sandbox out once, only for its key; another key disposes of it', async () => {
    const { warm, disposed } = pool();
    await warm.ensure('ws-a', 'k1', async () => 'a1');
    expect(await warm.take('ws-a', 'k1')).toBe('a1');
    expect(await warm.take('ws-a', 'k1')).toBeUndefined();

    await warm.ensure('ws-a', 'k1', async () => 'a2');
    expect(await warm.take('ws-a', 'k2')).toBeUndefined();
    await settle();
    expect(disposed).toEqual(['a2']);
  });

  it('keeps one per slot: the same key stays, another replaces it', async () => {
    const { warm, disposed } = pool();
    let starts = 0;
    await warm.ensure('ws-a', 'k1', async () => `a${++starts}`);
    await warm.ensure('ws-a', 'k1', async () => `a${++starts}`);
    expect(starts).toBe(1);
    await warm.ensure('ws-a', 'k2', async () => `a${++starts}`);
    await settle();
    expect(disposed).toEqual(['a1']);
    expect(await warm.take('ws-a', 'k2')).toBe('a2');
  });

  it('disposes of the oldest beyond the cap, of the too old, and of the slots asked for', async () => {
    const { warm, disposed } = pool({ maxTotal: 2, maxAgeMs: 80 });
    await warm.ensure('ws-a', 'k', async () => 'a');
    await warm.ensure('ws-b', 'k', async () => 'b');
    await warm.ensure('ws-c', 'k', async () => 'c');
    await settle();
    expect(disposed).toEqual(['a']);
    await warm.discardWhere((slot) => slot === 'ws-b');
    expect(disposed).toEqual(['a', 'b']);
    await new Promise((r) => setTimeout(r, 120));
    expect(disposed).toEqual(['a', 'b', 'c']);
    expect(await warm.take('ws-c', 'k')).toBeUndefined();
  });

  it('reports a failed start to the caller and hands nothing out for it', async () => {
    const { warm, disposed } = pool();
    await expect(warm.ensure('ws-a', 'k', async () => Promise.reject(new Error('bwrap: no')))).rejects.toThrow('bwrap: no');
    expect(await warm.take('ws-a', 'k')).toBeUndefined();
    expect(disposed).toEqual([]);
  });
});
