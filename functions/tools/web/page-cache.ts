import type { FetchedPage } from './web-page.ts';

/** How long a fetched page is reused: the reference's 15 minutes. */
export const PAGE_CACHE_TTL_MS = 15 * 60_000;
/** How much page text one instance keeps at most, all sessions together: the reference's 50 MB. */
export const PAGE_CACHE_MAX_BYTES = 50 * 1024 * 1024;

interface Entry {
  page: FetchedPage;
  storedAt: number;
  size: number;
}

/**
 * Pages WebFetch fetched, reused for 15 minutes as the reference reuses them (its prompt is still
 * read against the page each time). Kept per session: a page one session could reach is never
 * served to another, whose allowed domains may differ. In memory, per instance (a Lambda
 * container or the local process): a cold instance simply fetches again. Least recently used
 * pages go first once the byte cap is reached.
 */
export function createPageCache(opts: { ttlMs?: number; maxBytes?: number; clock?: () => number } = {}) {
  const ttlMs = opts.ttlMs ?? PAGE_CACHE_TTL_MS;
  const maxBytes = opts.maxBytes ?? PAGE_CACHE_MAX_BYTES;
  const clock = opts.clock ?? Date.now;
  const entries = new Map<string, Entry>();
  let total = 0;
  const key = (sessionId: string, url: string) => `${sessionId}\n${url}`;
  const drop = (k: string) => {
    const entry = entries.get(k);
    if (entry) total -= entry.size;
    entries.delete(k);
  };
  return {
    get(sessionId: string, url: string): FetchedPage | undefined {
      const k = key(sessionId, url);
      const entry = entries.get(k);
      if (!entry) return undefined;
      if (clock() - entry.storedAt > ttlMs) {
        drop(k);
        return undefined;
      }
      // Used again: it moves to the end of the eviction order.
      entries.delete(k);
      entries.set(k, entry);
      return entry.page;
    },
    set(sessionId: string, url: string, page: FetchedPage): void {
      const size = Buffer.byteLength(page.content);
      if (size > maxBytes) return;
      const k = key(sessionId, url);
      drop(k);
      entries.set(k, { page, storedAt: clock(), size });
      total += size;
      for (const oldest of entries.keys()) {
        if (total <= maxBytes) break;
        drop(oldest);
      }
    },
  };
}
