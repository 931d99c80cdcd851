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
export function createWarmCopies(opts: WarmCopiesOptions): WarmCopies {
  const copies = new WarmCopySet(opts);
  return {
    use: (id, fn) => copies.use(id, fn),
    retain: (id, until) => copies.locks.retain(id, until),
    trim: () => copies.trim(),
    stats: () => ({ queued: copies.locks.size, lastUsed: copies.lastUsed.size, states: opts.states.size }),
  };
}

interface WarmCopiesOptions {
  workspacesDir: string;
  maxWarm: number;
  /** The parsed state of warm copies by directory (LocalCopy's cache): dropped with the copy. */
  states: Map<string, LocalState>;
  onError: (message: string, err: unknown) => void;
  /** Ends what runs against a copy about to be removed (a sandbox started ahead for it). */
  beforeRemove?: (dir: string) => Promise<void>;
}

class WarmCopySet {
  readonly locks = createWorkspaceLocks();
  readonly lastUsed = new Map<string, number>();
  private readonly evicting = new Set<string>();
  private readonly max: number;

  constructor(private readonly opts: WarmCopiesOptions) {
    this.max = Math.max(1, opts.maxWarm);
  }

  use<T>(id: string, fn: (dir: string) => Promise<T>): Promise<T> {
    return this.locks.use(id, async () => {
      this.lastUsed.set(id, Date.now());
      await this.trim();
      try {
        return await fn(this.dirOf(id));
      } finally {
        this.lastUsed.set(id, Date.now());
        void this.trim();
      }
    });
  }

  trim(): Promise<void> {
    return this.trimOnce().catch((err: unknown) => this.opts.onError('could not trim warm workspace copies', err));
  }

  private dirOf(id: string): string {
    return path.join(this.opts.workspacesDir, id);
  }

  private async trimOnce(): Promise<void> {
    const onDisk = await fs.readdir(this.opts.workspacesDir).catch(() => [] as string[]);
    // A copy in use counts even before its directory exists (it is about to be materialised).
    const present = new Set([...onDisk, ...this.locks.busy()]);
    for (const id of this.lastUsed.keys()) if (!present.has(id)) this.lastUsed.delete(id);
    const idle = onDisk
      .filter((id) => !this.locks.inUse(id) && !this.evicting.has(id))
      .sort((a, b) => (this.lastUsed.get(a) ?? 0) - (this.lastUsed.get(b) ?? 0));
    // Copies another trim is already removing are on their way out: they do not count.
    const victims = idle.slice(0, Math.max(0, present.size - this.evicting.size - this.max));
    await Promise.all(victims.map((id) => this.evict(id)));
  }

  private evict(id: string): Promise<void> {
    this.evicting.add(id);
    return this.locks
      .runIfIdle(id, async () => {
        await this.opts.beforeRemove?.(this.dirOf(id));
        await fs.rm(this.dirOf(id), { recursive: true, force: true });
        this.opts.states.delete(this.dirOf(id));
        this.lastUsed.delete(id);
      })
      .then(
        () => undefined,
        (err: unknown) => this.opts.onError(`could not evict the warm copy of workspace ${id}`, err),
      )
      .finally(() => this.evicting.delete(id));
  }
}
