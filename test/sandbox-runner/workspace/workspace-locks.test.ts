import { describe, expect, it } from 'vitest';
import { createWorkspaceLocks } from '../../../sandbox-runner/workspace/workspace-locks.ts';

/** The bookkeeping after a task settles runs a few microtasks later. */
const settled = () => new Promise((resolve) => setImmediate(resolve));

const deferred = () => {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
};

describe('workspace locks', () => {
  it('runs the tasks of one workspace one at a time, in order, and different workspaces in parallel', async () => {
    const locks = createWorkspaceLocks();
    const order: string[] = [];
    const gate = deferred();
    const a1 = locks.use('a', async () => {
      order.push('a1 start');
      await gate.promise;
      order.push('a1 end');
    });
    const a2 = locks.use('a', async () => void order.push('a2'));
    const b1 = locks.use('b', async () => void order.push('b1'));
    await b1;
    expect(order).toEqual(['a1 start', 'b1']);
    gate.resolve();
    await Promise.all([a1, a2]);
    expect(order).toEqual(['a1 start', 'b1', 'a1 end', 'a2']);
    await settled();
    expect(locks.size).toBe(0);
  });

  it('skips an idle-only task (an eviction) when a use was queued behind it or something retains the workspace', async () => {
    const locks = createWorkspaceLocks();
    const ran: string[] = [];
    const gate = deferred();
    const busy = locks.use('a', () => gate.promise);
    const evictWhileBusy = locks.runIfIdle('a', async () => void ran.push('evicted while queued behind a use'));
    const next = locks.use('a', async () => void ran.push('next use'));
    expect(locks.inUse('a')).toBe(true);
    gate.resolve();
    await busy;
    // The use queued after the eviction still counts when the eviction's turn comes.
    expect(await evictWhileBusy).toBe(false);
    await next;

    const background = deferred();
    locks.retain('a', background.promise);
    expect(await locks.runIfIdle('a', async () => void ran.push('evicted under a background command'))).toBe(false);
    background.resolve();
    await settled();
    expect(await locks.runIfIdle('a', async () => void ran.push('evicted when idle'))).toBe(true);
    expect(ran).toEqual(['next use', 'evicted when idle']);
    await settled();
    expect(locks.busy()).toEqual([]);
    expect(locks.size).toBe(0);
  });

  it('keeps going after a task fails', async () => {
    const locks = createWorkspaceLocks();
    await expect(locks.use('a', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await locks.use('a', async () => 'after')).toBe('after');
    await settled();
    expect(locks.size).toBe(0);
  });
});
