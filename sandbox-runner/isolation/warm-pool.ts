/** What the pool keeps of a pre-started sandbox: its key, its age and the sandbox once started. */
interface WarmEntry<T> {
  key: string;
  startedAt: number;
  /** The sandbox, or undefined when it failed to start. */
  ready: Promise<T | undefined>;
  expiry: NodeJS.Timeout;
}

export interface WarmPoolOptions<T> {
  /** Most pre-started sandboxes at once, over all workspaces; the oldest go first. */
  maxTotal: number;
  /** A sandbox unused this long is killed (it holds a cgroup and processes for nothing). */
  maxAgeMs: number;
  /** Ends a sandbox that will never be used. */
  dispose(item: T): Promise<void>;
  onError(message: string, err: unknown): void;
}

/**
 * Pre-started sandboxes, at most one per slot (a workspace directory) and `maxTotal` in all. A
 * sandbox is handed out once (take removes it) or disposed of; one whose key differs from the
 * command's, or that is too old, is disposed of instead of used.
 */
export class WarmPool<T> {
  private readonly entries = new Map<string, WarmEntry<T>>();

  constructor(private readonly opts: WarmPoolOptions<T>) {}

  /** The slot's sandbox if its key is `key` and it is fresh; it leaves the pool either way. */
  take(slot: string, key: string): Promise<T | undefined> {
    const entry = this.entries.get(slot);
    if (!entry) return Promise.resolve(undefined);
    this.remove(slot);
    if (entry.key !== key || this.expired(entry)) {
      this.disposeEntry(entry);
      return Promise.resolve(undefined);
    }
    return entry.ready;
  }

  /**
   * Keeps a sandbox of `key` started for `slot`: a fresh one of that key stays, any other is
   * disposed of and `start` runs. Answers whether one is there; a failed start rejects.
   */
  ensure(slot: string, key: string, start: () => Promise<T>): Promise<boolean> {
    const existing = this.entries.get(slot);
    if (existing && existing.key === key && !this.expired(existing)) return existing.ready.then((item) => item !== undefined);
    if (existing) {
      this.remove(slot);
      this.disposeEntry(existing);
    }
    const started = start();
    const entry: WarmEntry<T> = {
      key,
      startedAt: Date.now(),
      ready: started.catch(() => undefined),
      expiry: setTimeout(() => this.expire(slot, entry), this.opts.maxAgeMs).unref(),
    };
    this.entries.set(slot, entry);
    // A failed start leaves nothing to hand out.
    started.catch(() => this.entries.get(slot) === entry && this.remove(slot));
    for (const [oldest] of this.entries) {
      if (this.entries.size <= this.opts.maxTotal) break;
      this.disposeEntry(this.remove(oldest)!);
    }
    return started.then(() => true);
  }

  /** Disposes of the sandboxes of every slot `matches` accepts; settles once they are gone. */
  async discardWhere(matches: (slot: string) => boolean): Promise<void> {
    const gone = [...this.entries.keys()].filter(matches).map((slot) => this.disposeEntry(this.remove(slot)!));
    await Promise.all(gone);
  }

  private expired(entry: WarmEntry<T>): boolean {
    return Date.now() - entry.startedAt >= this.opts.maxAgeMs;
  }

  private expire(slot: string, entry: WarmEntry<T>): void {
    if (this.entries.get(slot) !== entry) return;
    this.remove(slot);
    void this.disposeEntry(entry);
  }

  private remove(slot: string): WarmEntry<T> | undefined {
    const entry = this.entries.get(slot);
    if (entry) clearTimeout(entry.expiry);
    this.entries.delete(slot);
    return entry;
  }

  private disposeEntry(entry: WarmEntry<T>): Promise<void> {
    return entry.ready
      .then((item) => (item === undefined ? undefined : this.opts.dispose(item)))
      .catch((err: unknown) => this.opts.onError('could not end a pre-started sandbox', err));
  }
}
