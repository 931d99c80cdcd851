import { describe, expect, it } from 'vitest';
import { firstText } from '../support/agent-requests.ts';
import { text, unscripted, useLocalStack } from '../support/stack-fixture.ts';
import type { ScriptedBlock } from '../../local/scripted-model/script.ts';

/**
 * WebSearch through the real path (docs/tools.md, "WebSearch"): the tool asks the session's model
 * for a search with the provider's web search server tool, which the scripted model server
 * streams as the API does (server_tool_use, web_search_tool_result, usage.server_tool_use).
 */
const SEARCH_START = 'Perform a web search for the query: ';
const NO_TOKENS = { input_tokens: 0, output_tokens: 0 };
const search = (id: string, input: Record<string, unknown>) => ({ type: 'tool_use' as const, id, name: 'WebSearch', input });
const hit = (title: string, url: string) => ({ type: 'web_search_result', title, url, encrypted_content: 'enc', page_age: null });
const toolNames = (body: { tools?: { name: string }[] }) => (body.tools ?? []).map((t) => t.name);

describe('WebSearch, turned on (STRATUS_WEB_SEARCH=on)', () => {
  const fx = useLocalStack({ brain: unscripted, model: { webSearch: true } });

  it("runs the provider's search in a second request and answers in the reference's format, priced per search", async () => {
    const sessionId = await fx.api.createSession();
    const searchBlocks: ScriptedBlock[] = [
      { type: 'text', text: 'I will search for that.' },
      { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'vitest 4 release' } },
      { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [hit('Vitest 4', 'https://vitest.dev/blog/vitest-4')] },
      { type: 'text', text: 'Vitest 4 ' },
      { type: 'text', text: 'was released in October.' },
      { type: 'server_tool_use', id: 'srvtoolu_2', name: 'web_search', input: { query: 'vitest 4 changelog' } },
      { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_2', content: { type: 'web_search_tool_result_error', error_code: 'max_uses_exceeded' } },
    ];
    fx.stack.model!.enqueue(
      { content: [search('toolu_s', { query: 'vitest 4 release', allowed_domains: ['vitest.dev'] })], usage: NO_TOKENS },
      { forFirstText: SEARCH_START, content: searchBlocks, usage: NO_TOKENS },
      { ...text('found it'), usage: NO_TOKENS },
    );
    const res = await fx.api.turn(sessionId, 'when was vitest 4 released?');
    const result = res.json.events.find((e: { type: string; toolUseId?: string }) => e.type === 'tool_result' && e.toolUseId === 'toolu_s');
    expect(result).toMatchObject({
      isError: false,
      content: `Web search results for query: "vitest 4 release"

I will search for that.

Links: [{"title":"Vitest 4","url":"https://vitest.dev/blog/vitest-4"}]

Vitest 4 was released in October.

Web search error: max_uses_exceeded


REMINDER: You MUST include the sources above in your response to the user using markdown hyperlinks.`,
    });
    const request = fx.stack.model!.requests.find((r) => firstText(r.body).startsWith(SEARCH_START))!;
    expect(request.body.messages[0]!.content).toBe(`${SEARCH_START}vitest 4 release`);
    expect(request.body.tools).toEqual([{ type: 'web_search_20250305', name: 'web_search', max_uses: 8, allowed_domains: ['vitest.dev'] }]);
    // No tokens anywhere: what the session spent is the two searches at 0.01 USD each.
    const view = (await fx.api.request('GET', `/v1/sessions/${sessionId}`)).json;
    expect(view.usage.costUsd).toBe(0.02);
    expect(toolNames(fx.stack.model!.requests[0]!.body)).toEqual(expect.arrayContaining(['WebFetch', 'WebSearch']));
  });

  it('refuses both domain lists at once, and a query shorter than two characters, before searching', async () => {
    const sessionId = await fx.api.createSession();
    const before = fx.stack.model!.requests.length;
    fx.stack.model!.enqueue(
      {
        content: [
          search('toolu_both', { query: 'x y', allowed_domains: ['a.example'], blocked_domains: ['b.example'] }),
          search('toolu_short', { query: 'x' }),
        ],
      },
      text('ok'),
    );
    const res = await fx.api.turn(sessionId, 'search');
    const byId = Object.fromEntries(
      res.json.events.filter((e: { type: string }) => e.type === 'tool_result').map((e: { toolUseId: string; content: string }) => [e.toolUseId, e]),
    );
    expect(byId.toolu_both).toMatchObject({
      isError: true,
      content: '<tool_use_error>Error: Cannot specify both allowed_domains and blocked_domains in the same request</tool_use_error>',
    });
    expect(byId.toolu_short.isError).toBe(true);
    expect(byId.toolu_short.content).toContain('too_small');
    expect(fx.stack.model!.requests.slice(before).some((r) => firstText(r.body).startsWith(SEARCH_START))).toBe(false);
  });
});

describe('WebSearch where it is not offered', () => {
  const off = useLocalStack({ brain: () => text('hi') });
  const bedrock = useLocalStack({ brain: () => text('hi'), scriptedProvider: 'bedrock', model: { webSearch: true } });

  it('is absent from the tool list by default, and on Bedrock whatever the setting says; WebFetch is there', async () => {
    for (const fx of [off, bedrock]) {
      const sessionId = await fx.api.createSession();
      expect((await fx.api.turn(sessionId, 'hello')).status).toBe(200);
      const names = toolNames(fx.stack.model!.requests.at(-1)!.body);
      expect(names).toContain('WebFetch');
      expect(names).not.toContain('WebSearch');
    }
  });
});
