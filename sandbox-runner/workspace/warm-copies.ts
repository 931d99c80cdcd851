import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { LocalState } from './local-copy.ts';
import { createWorkspaceLocks } from './workspace-locks.ts';

export interface WarmCopies {
  /**
   * Runs `fn` with exclusive use of workspace `id`'s copy (`dir`): after every earlier task on
   * it, never while it is evicted. Before `fn`, idle copies beyond the warm limit are removed
   * (so a Lambda container's /tmp holds one workspace); afterwards that is tried again without
   * waiting for it.
   */
  use<T>(id: string, fn: (dir: string) => Promise<T>): Promise<T>;
  /** Keeps `id`'s copy from eviction until `until` settles (a background command uses it). */
  retain(id: string, until: Promise<unknown>): void;
  /** Removes idle copies beyond the limit, least recently used first; never fails. */
  trim(): Promise<void>;
  /** Sizes of the in-memory records, which must stay bounded by the copies on disk. */
  stats(): { queued: number; lastUsed: number; states: number };
}

/**
 * The runner's warm workspace copies under `{workspacesDir}/{id}`: how many stay on disk, and
 * the rule that keeps eviction from racing ops. An eviction is queued on the victim's own queue
 * (workspace-locks.ts) and re-checks there that nothing uses the victim; a workspace in use is
 * never removed, so copies in use beyond the limit simply stay until they are idle (a request
 * beyond the warm limit starts cold, it never waits for or fails on capacity).
 */
export function createWarmCopies(opts: {
  workspacesDir: string;
  maxWarm: number;
  /** The parsed state of warm copies by directory (LocalCopy's cache): dropped with the copy. */
  states: Map<string, LocalState>;
  onError: (message: string, err: unknown) => void;
}): WarmCopies {
  const locks = createWorkspaceLocks();
  const lastUsed = new Map<string, number>();
  const evicting = new Set<string>();
  const max = Math.max(1, opts.maxWarm);
  const dirOf = (id: string) => path.join(opts.workspacesDir, id);
  async function trimOnce(): Promise<void> {
    const onDisk = await fs.readdir(opts.workspacesDir).catch(() => [] as string[]);
    // A copy in use counts even before its directory exists (it is about to be materialised).
    const present = new Set([...onDisk, ...locks.busy()]);
    for (const id of lastUsed.keys()) if (!present.has(id)) lastUsed.delete(id);
    const idle = onDisk
      .filter((id) => !locks.inUse(id) && !evicting.has(id))
      .sort((a, b) => (lastUsed.get(a) ?? 0) - (lastUsed.get(b) ?? 0));
    // Copies another trim is already removing are on their way out: they do not count.
    const victims = idle.slice(0, Math.max(0, present.size - evicting.size - max));
    await Promise.all(victims.map(evict));
  }

  function evict(id: string): Promise<void> {
    evicting.add(id);
    return locks
      .runIfIdle(id, async () => {
        await fs.rm(dirOf(id), { recursive: true, force: true });
        opts.states.delete(dirOf(id));
        lastUsed.delete(id);
      })
      .then(
        () => undefined,
        (err: unknown) => opts.onError(`could not evict the warm copy of workspace ${id}`, err),
      )
      .finally(() => evicting.delete(id));
  }

  const trim = (): Promise<void> => trimOnce().catch((err: unknown) => opts.onError('could not trim warm workspace copies', err));

  return {
    use: (id, fn) =>
      locks.use(id, async () => {
        lastUsed.set(id, Date.now());
        await trim();
        try {
          return await fn(dirOf(id));
        } finally {
          lastUsed.set(id, Date.now());
          void trim();
        }
      }),
    retain: (id, until) => locks.retain(id, until),
    trim,
    stats: () => ({ queued: locks.size, lastUsed: lastUsed.size, states: opts.states.size }),
  };
}
