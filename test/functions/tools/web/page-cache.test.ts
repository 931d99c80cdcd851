import { describe, expect, it } from 'vitest';
import { createPageCache } from '../../../../functions/tools/web/page-cache.ts';

const page = (content: string) => ({ kind: 'page' as const, bytes: content.length, code: 200, codeText: 'OK', content, contentType: 'text/plain' });

describe("WebFetch's page cache", () => {
  it('keeps a page 15 minutes for the session that fetched it only', () => {
    let now = 0;
    const cache = createPageCache({ clock: () => now });
    cache.set('ses_a', 'https://x.example/', page('hello'));
    expect(cache.get('ses_a', 'https://x.example/')?.content).toBe('hello');
    expect(cache.get('ses_b', 'https://x.example/')).toBeUndefined();
    now = 15 * 60_000;
    expect(cache.get('ses_a', 'https://x.example/')?.content).toBe('hello');
    now = 15 * 60_000 + 1;
    expect(cache.get('ses_a', 'https://x.example/')).toBeUndefined();
  });

  it('lets the least recently used pages go past its byte cap, and never keeps a page larger than the cap', () => {
    const cache = createPageCache({ maxBytes: 10 });
    cache.set('s', 'a', page('aaaa'));
    cache.set('s', 'b', page('bbbb'));
    expect(cache.get('s', 'a')).toBeDefined(); // a is now the most recently used
    cache.set('s', 'c', page('cccc'));
    expect([cache.get('s', 'a')?.content, cache.get('s', 'b'), cache.get('s', 'c')?.content]).toEqual(['aaaa', undefined, 'cccc']);
    cache.set('s', 'huge', page('x'.repeat(11)));
    expect(cache.get('s', 'huge')).toBeUndefined();
    expect(cache.get('s', 'a')?.content).toBe('aaaa');
  });
});
