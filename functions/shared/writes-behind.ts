/**
 * Writes a caller does not wait for (bookkeeping that no answer depends on: a runner slot given
 * back, bytes counted against a quota), kept per key so that the next read of that key in this
 * process can wait for them first (it never sees its own last write missing), and all of them so
 * that an invocation can wait for them before it ends (Lambda freezes an environment when its
 * handler returns: functions/handlers/invocation-end.ts). A failed write is only reported.
 */
export class WritesBehind {
  private readonly pending = new Map<string, Set<Promise<void>>>();

  /** Starts `write` for `key` without waiting for it; `onError` gets its failure. */
  start(key: string, write: () => Promise<unknown>, onError: (err: unknown) => void = () => undefined): void {
    const writes = this.pending.get(key) ?? new Set<Promise<void>>();
    this.pending.set(key, writes);
    const done: Promise<void> = write()
      .then(() => undefined, onError)
      .finally(() => {
        writes.delete(done);
        if (writes.size === 0 && this.pending.get(key) === writes) this.pending.delete(key);
      });
    writes.add(done);
  }

  /** Waits for the writes of `key` started so far (at once when there are none). */
  async before(key: string): Promise<void> {
    const writes = this.pending.get(key);
    if (writes) await Promise.all(writes);
  }

  /** Waits for every write started so far. */
  async settled(): Promise<void> {
    await Promise.all([...this.pending.values()].flatMap((writes) => [...writes]));
  }
}
