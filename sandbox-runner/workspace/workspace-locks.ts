/**
 * Who may touch a warm workspace copy, and when. Every task on one workspace (an op with its
 * materialisation and publication, or the copy's eviction) runs on that workspace's own queue,
 * one at a time; different workspaces run in parallel. A workspace is *in use* from the moment
 * an op is queued for it until that op settles, and while something retains it (a background
 * command still writing to its tree). Eviction runs on the victim's queue and only if nothing
 * uses it when its turn comes, so a copy is never deleted under an op that is about to use it.
 */
export interface WorkspaceLocks {
  /** Queues `fn` on `id`; the workspace counts as in use from now until `fn` settles. */
  use<T>(id: string, fn: () => Promise<T>): Promise<T>;
  /**
   * Queues `fn` on `id` without counting as a use, and runs it only if no use is queued or
   * running and nothing retains `id` when its turn comes. Resolves to whether it ran.
   */
  runIfIdle(id: string, fn: () => Promise<void>): Promise<boolean>;
  /** Keeps `id` in use until `until` settles, without holding its queue. */
  retain(id: string, until: Promise<unknown>): void;
  inUse(id: string): boolean;
  /** Workspaces in use now. */
  busy(): string[];
  /** Workspaces with anything queued, running or retained (bounded by the work in flight). */
  readonly size: number;
}

interface Entry {
  tail: Promise<void>;
  /** Uses queued or running, plus retains not yet settled. */
  users: number;
  /** Tasks (uses and idle-only tasks) not yet settled. */
  tasks: number;
}

const settle = () => undefined;

export function createWorkspaceLocks(): WorkspaceLocks {
  const entries: Entries = new Map();
  return {
    use: (id, fn) => enqueue(entries, id, true, () => fn()),
    runIfIdle: (id, fn) =>
      enqueue(entries, id, false, async (entry) => {
        if (entry.users > 0) return false;
        await fn();
        return true;
      }),
    retain(id, until) {
      const entry = entryFor(entries, id);
      entry.users += 1;
      void until.then(settle, settle).then(() => {
        entry.users -= 1;
        release(entries, id, entry);
      });
    },
    inUse: (id) => (entries.get(id)?.users ?? 0) > 0,
    busy: () => [...entries].filter(([, e]) => e.users > 0).map(([id]) => id),
    get size() {
      return entries.size;
    },
  };
}

type Entries = Map<string, Entry>;

function entryFor(entries: Entries, id: string): Entry {
  let entry = entries.get(id);
  if (!entry) {
    entry = { tail: Promise.resolve(), users: 0, tasks: 0 };
    entries.set(id, entry);
  }
  return entry;
}

// An entry lives only while something is queued or retained: the map stays as small as the
// work in flight, however many workspaces a long-lived runner has served.
function release(entries: Entries, id: string, entry: Entry): void {
  if (entry.users === 0 && entry.tasks === 0 && entries.get(id) === entry) entries.delete(id);
}

function enqueue<T>(entries: Entries, id: string, counts: boolean, fn: (entry: Entry) => Promise<T>): Promise<T> {
  const entry = entryFor(entries, id);
  entry.tasks += 1;
  if (counts) entry.users += 1;
  const result = entry.tail.then(() => fn(entry));
  entry.tail = result.then(settle, settle);
  void entry.tail.then(() => {
    entry.tasks -= 1;
    if (counts) entry.users -= 1;
    release(entries, id, entry);
  });
  return result;
}
