import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TRUNCATED_NOTE } from '../../functions/tools/web/page-reader.ts';
import { startCountingServer, type CountingServer } from '../support/counting-server.ts';
import type { ScriptedResponse } from '../../local/scripted-model/script.ts';
import { firstText } from '../support/agent-requests.ts';
import { text, unscripted, useLocalStack } from '../support/stack-fixture.ts';

/**
 * WebFetch through the real path (docs/tools.md, "WebFetch"): sessions configured over the API,
 * turns on the local stack, pages on a loopback server the operator's STRATUS_PRIVATE_NETWORK_ALLOW
 * names, the page read by the scripted model in a second request priced into the session.
 */
const fetchCall = (id: string, url: string, prompt = 'What version ships?') => ({ type: 'tool_use' as const, id, name: 'WebFetch', input: { url, prompt } });
const READER_START = '\nWeb page content:';
const PAGE_HTML = '<html><body><h1>Release notes</h1><p>Version <b>4.2</b> ships today.</p></body></html>';
const results = (res: { json: { events: { type: string; toolUseId?: string; content?: unknown; isError?: boolean }[] } }) =>
  Object.fromEntries(res.json.events.filter((e) => e.type === 'tool_result').map((e) => [e.toolUseId, e as { content: string; isError: boolean }]));

function pageServer() {
  return startCountingServer((req, res) => {
    const at = req.path;
    if (at === '/page.html') return res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE_HTML);
    if (at === '/notes.txt') return res.writeHead(200, { 'content-type': 'text/plain' }).end('plain *text* kept as it is');
    if (at === '/big.txt') return res.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(150_000));
    if (at === '/moved') return res.writeHead(301, { location: '/page.html' }).end();
    if (at === '/away') return res.writeHead(302, { location: 'https://elsewhere.example/landing?x=1' }).end();
    if (at === '/loop') return res.writeHead(307, { location: '/loop' }).end();
    res.writeHead(404).end('not here');
  });
}

describe('WebFetch', () => {
  let pages: CountingServer;
  const route: { fn: (body: Parameters<typeof firstText>[0]) => ScriptedResponse | undefined } = { fn: () => undefined };
  beforeAll(async () => {
    pages = await pageServer();
  });
  afterAll(async () => pages?.close());
  const fx = useLocalStack(() => ({
    brain: (body) => route.fn(body) ?? unscripted(),
    settings: { model: {}, turn: {}, api: {}, observability: {}, outbound: { privateNetworkAllow: [`127.0.0.1:${pages.port}`] } },
  }));
  const base = () => `http://127.0.0.1:${pages.port}`;
  const session = async (settings: Record<string, unknown> = {}) => {
    const res = await fx.api.request('POST', '/v1/sessions', { settings: { allowedDomains: [`127.0.0.1:${pages.port}`], ...settings } });
    expect(res.status).toBe(201);
    return res.json.id as string;
  };
  /** One turn whose model makes these WebFetch calls, the reader answering each page with `READ <n>`. */
  async function turnWith(sessionId: string, calls: ReturnType<typeof fetchCall>[], readerUsage?: { input_tokens: number; output_tokens: number }) {
    let main = 0;
    let reads = 0;
    route.fn = (body) => {
      if (firstText(body).startsWith(READER_START)) return { ...text(`READ ${++reads}`), ...(readerUsage ? { usage: readerUsage } : {}) };
      return [{ content: calls }, text('done')][main++];
    };
    const res = await fx.api.turn(sessionId, 'look it up');
    expect(res.status).toBe(200);
    return results(res);
  }
  const readerRequests = () => fx.stack.model!.requests.filter((r) => firstText(r.body).startsWith(READER_START));

  it('reads a page as Markdown with the prompt in a second model request, and answers with what that request said', async () => {
    const sessionId = await session();
    const before = readerRequests().length;
    const out = await turnWith(sessionId, [fetchCall('toolu_page', `${base()}/page.html`)]);
    expect(out.toolu_page).toMatchObject({ isError: false, content: 'READ 1' });
    const reader = readerRequests().slice(before);
    expect(reader).toHaveLength(1);
    const prompt = reader[0]!.body.messages[0]!.content as string;
    expect(prompt).toContain('---\nRelease notes\n=============\n\nVersion **4.2** ships today.\n---\n\nWhat version ships?\n');
    // The reader gets no tools and no system prompt of the agent's: it only reads.
    expect(reader[0]!.body.tools).toBeUndefined();
    expect(reader[0]!.body.system).toBeUndefined();
    const seen = pages.seen.requests.at(-1)!;
    expect(seen.headers.accept).toBe('text/markdown, text/html, */*');
    for (const header of ['authorization', 'cookie', 'x-api-key', 'proxy-authorization']) expect(seen.headers[header]).toBeUndefined();
  });

  it('reuses a page the session fetched (15 minutes, per session), reading it with each prompt again', async () => {
    const first = await session();
    const url = `${base()}/notes.txt`;
    const count = () => pages.seen.requests.filter((r) => r.path === '/notes.txt').length;
    const before = count();
    const readsBefore = readerRequests().length;
    const out = await turnWith(first, [fetchCall('toolu_c1', url), fetchCall('toolu_c2', url, 'Anything else?')]);
    expect([out.toolu_c1!.content, out.toolu_c2!.content].sort()).toEqual(['READ 1', 'READ 2']);
    expect(readerRequests().length - readsBefore).toBe(2);
    // Two calls in one response run concurrently: at most both fetch; a later turn reuses the page.
    const afterFirstTurn = count();
    expect(afterFirstTurn - before).toBeGreaterThanOrEqual(1);
    await turnWith(first, [fetchCall('toolu_c3', url)]);
    expect(count()).toBe(afterFirstTurn);
    // Another session never gets this session's page: it fetches its own.
    await turnWith(await session(), [fetchCall('toolu_c4', url)]);
    expect(count()).toBe(afterFirstTurn + 1);
  });

  it('counts the reader request into the session usage and cost (its budgets)', async () => {
    const sessionId = await session();
    const before = fx.stack.model!.requests.length;
    await turnWith(sessionId, [fetchCall('toolu_priced', `${base()}/notes.txt`)], { input_tokens: 40_000, output_tokens: 1_000 });
    const mainInput = fx.stack
      .model!.requests.slice(before)
      .filter((r) => !firstText(r.body).startsWith(READER_START))
      .reduce((n, r) => n + Math.ceil(r.raw.length / 4), 0);
    const view = (await fx.api.request('GET', `/v1/sessions/${sessionId}`)).json;
    expect(view.usage.inputTokens).toBe(mainInput + 40_000);
    // 40,000 input and 1,000 output tokens at 3 and 15 USD per million: 0.135 USD of the total.
    expect(view.usage.costUsd).toBeGreaterThanOrEqual(0.135);
  });

  it('follows a redirect within the host, reports one to another host, and says what failed', async () => {
    const sessionId = await session();
    const out = await turnWith(sessionId, [
      fetchCall('toolu_moved', `${base()}/moved`),
      fetchCall('toolu_away', `${base()}/away`, 'Find the date'),
      fetchCall('toolu_404', `${base()}/missing`),
      fetchCall('toolu_loop', `${base()}/loop`),
      fetchCall('toolu_ftp', 'ftp://files.example/a.txt'),
      fetchCall('toolu_bad', 'not a url'),
    ]);
    expect(out.toolu_moved!.isError).toBe(false);
    expect(out.toolu_moved!.content).toMatch(/^READ \d$/);
    expect(out.toolu_away).toMatchObject({
      isError: false,
      content: `REDIRECT DETECTED: The URL redirects to a different host.

Original URL: ${base()}/away
Redirect URL: https://elsewhere.example/landing?x=1
Status: 302 Found

To complete your request, I need to fetch content from the redirected URL. Please use WebFetch again with these parameters:
- url: "https://elsewhere.example/landing?x=1"
- prompt: "Find the date"`,
    });
    expect(out.toolu_404).toMatchObject({ isError: true, content: 'Request failed with status code 404' });
    expect(out.toolu_loop).toMatchObject({ isError: true, content: 'Too many redirects (exceeded 10)' });
    expect(out.toolu_ftp).toMatchObject({ isError: true, content: 'Unsupported protocol ftp:' });
    expect(out.toolu_bad!.isError).toBe(true);
    expect(out.toolu_bad!.content).toContain('invalid_format');
  });

  it('cuts a long page at 100,000 characters before it is read', async () => {
    const sessionId = await session();
    const before = readerRequests().length;
    await turnWith(sessionId, [fetchCall('toolu_big', `${base()}/big.txt`)]);
    const prompt = readerRequests().slice(before)[0]!.body.messages[0]!.content as string;
    expect(prompt).toContain(`---\n${'x'.repeat(100_000)}${TRUNCATED_NOTE}\n---`);
    expect(prompt).not.toContain('x'.repeat(100_001));
  });

  it("fetches only the session's allowed network domains and public addresses; the page server sees nothing else", async () => {
    const unlisted = await session({ allowedDomains: [] });
    const connections = pages.seen.connections;
    const out = await turnWith(unlisted, [fetchCall('toolu_unlisted', `${base()}/page.html`), fetchCall('toolu_loopback', 'https://127.0.0.2/page.html')]);
    expect(out.toolu_unlisted).toMatchObject({
      isError: true,
      content: JSON.stringify({
        error_type: 'EGRESS_BLOCKED',
        domain: '127.0.0.1',
        message:
          "Access to 127.0.0.1 is blocked by the network egress proxy: 127.0.0.1 is not in this session's allowed network domains (settings.allowedDomains).",
      }),
    });
    expect(out.toolu_loopback!.isError).toBe(true);
    expect(pages.seen.connections).toBe(connections);
    // Listed by the session, but the name (with a trailing dot, so it has two labels) resolves to a
    // loopback address the operator does not allow: the outbound policy refuses it.
    const victim = await startCountingServer();
    try {
      const listed = await session({ allowedDomains: [`localhost:${victim.port}`] });
      const refused = await turnWith(listed, [fetchCall('toolu_localhost', `http://localhost.:${victim.port}/admin`)]);
      expect(refused.toolu_localhost).toMatchObject({
        isError: true,
        content: `Refused to call https://localhost.:${victim.port}: localhost resolves to 127.0.0.1, which is a loopback address, and STRATUS_PRIVATE_NETWORK_ALLOW does not allow it.`,
      });
      expect(victim.seen.connections).toBe(0);
    } finally {
      await victim.close();
    }
  });

  it('asks per domain: WebFetch(domain:HOST) rules allow or deny, and without one nobody is there to ask', async () => {
    const rules = (lists: Record<string, string[]>) => session({ permissionMode: 'dontAsk', rules: lists });
    const allowed = await turnWith(await rules({ allow: ['WebFetch(domain:127.0.0.1)'] }), [fetchCall('toolu_allowed', `${base()}/notes.txt`)]);
    expect(allowed.toolu_allowed!.isError).toBe(false);
    const denied = await turnWith(await rules({ allow: ['WebFetch(domain:127.0.0.1)'], deny: ['WebFetch(domain:127.0.0.1)'] }), [
      fetchCall('toolu_denied', `${base()}/notes.txt`),
    ]);
    expect(denied.toolu_denied).toMatchObject({ isError: true, content: 'Permission to use WebFetch has been denied.' });
    const other = await turnWith(await rules({ allow: ['WebFetch(domain:docs.example.com)'] }), [fetchCall('toolu_other', `${base()}/notes.txt`)]);
    expect(other.toolu_other!.isError).toBe(true);
    expect(other.toolu_other!.content).toContain("don't ask mode");
  });
});

describe('WebFetch where sessions have no network (STRATUS_EGRESS=none)', () => {
  const fx = useLocalStack({
    brain: unscripted,
    settings: { model: {}, turn: {}, api: {}, observability: {}, egress: 'none' },
  });

  it('answers with an error the model can act on, and fetches nothing', async () => {
    const sessionId = await fx.api.createSession();
    fx.stack.model!.enqueue({ content: [fetchCall('toolu_none', 'https://docs.example.com/guide')] }, text('ok'));
    const res = await fx.api.turn(sessionId, 'read the guide');
    expect(results(res).toolu_none).toMatchObject({
      isError: true,
      content:
        "Cannot fetch docs.example.com: this Stratus deployment gives sessions no network access (STRATUS_EGRESS=none), so no web page can be fetched. Work from what the workspace holds, or ask the user for the page's content.",
    });
    expect(fx.stack.model!.requests.some((r) => firstText(r.body).startsWith(READER_START))).toBe(false);
  });
});
