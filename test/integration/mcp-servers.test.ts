import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMcpDemoServer, PIXEL_PNG, type McpDemoServer } from '../../local/mcp-demo-server.ts';
import { text, unscripted, useLocalStack } from '../support/stack-fixture.ts';

const TOKEN = 'Bearer mcp-secret-token-123';
const use = (id: string, name: string, input: Record<string, unknown> = {}) => ({ type: 'tool_use' as const, id, name, input });

describe('remote MCP servers (Streamable HTTP, official SDK on both sides)', () => {
  let mcp: McpDemoServer;
  beforeAll(async () => {
    mcp = await startMcpDemoServer({ slowMs: 5_000 });
  });
  afterAll(async () => {
    await mcp?.close();
  });
  // The operator lets sessions reach exactly the demo server and the closed port 9 (STRATUS_PRIVATE_NETWORK_ALLOW);
  // MCP calls leave from the API side, so no allowedDomains entry is needed.
  const env = useLocalStack(() => ({
    brain: unscripted,
    settings: {
      model: {},
      turn: {},
      api: {},
      observability: {},
      mcp: { toolTimeoutMs: 1_500, connectTimeoutMs: 10_000 },
      outbound: { privateNetworkAllow: [`127.0.0.1:${mcp.port}`, '127.0.0.1:9'] },
    },
  }));
  const settings = (extra: Record<string, unknown> = {}) => ({
    mcpServers: { tracker: { type: 'http', url: mcp.url, headers: { Authorization: TOKEN } } },
    toolSearch: 'standard',
    ...extra,
  });

  it('lists the tools after the built-ins, calls them, and turns errors, timeouts and drops into error results', { timeout: 120_000 }, async () => {
    const { stack, api } = env;
    const created = await api.request('POST', '/v1/sessions', { settings: settings({ rules: { deny: ['mcp__tracker__close_issue_'] } }) });
    expect(created.status).toBe(201);
    expect(created.json.mcpServers).toEqual({ tracker: { type: 'http', url: mcp.url, headers: { Authorization: '[redacted]' } } });
    expect(created.text).not.toContain('mcp-secret-token');
    const sessionId = created.json.id as string;
    const before = stack.model!.requests.length;
    stack.model!.enqueue(
      {
        content: [
          use('t_get', 'mcp__tracker__get_issue', { number: 7 }),
          use('t_count', 'mcp__tracker__count_issues'),
          use('t_att', 'mcp__tracker__attachments'),
          use('t_refuse', 'mcp__tracker__refuse'),
          use('t_slow', 'mcp__tracker__slow'),
          use('t_drop', 'mcp__tracker__drop_connection'),
          use('t_big', 'mcp__tracker__export_all'),
          use('t_denied', 'mcp__tracker__close_issue_', { number: 7 }),
          use('t_badinput', 'mcp__tracker__get_issue', { number: 'seven' }),
        ],
      },
      text('All done.'),
    );
    const res = await api.turn(sessionId, 'look at the tracker');
    expect(res.status).toBe(200);
    expect(res.json.stopReason).toBe('end_turn');

    const first = stack.model!.requests[before]!.body;
    const names = first.tools!.map((t: { name: string }) => t.name);
    const mcpNames = names.filter((n: string) => n.startsWith('mcp__'));
    // Built-ins first (sorted), MCP tools after (sorted, normalised, the denied one gone), no ToolSearch in standard mode.
    expect(names.slice(0, names.length - mcpNames.length).every((n: string) => !n.startsWith('mcp__'))).toBe(true);
    expect(mcpNames).toEqual([
      'mcp__tracker__attachments',
      'mcp__tracker__count_issues',
      'mcp__tracker__drop_connection',
      'mcp__tracker__export_all',
      'mcp__tracker__get_issue',
      'mcp__tracker__refuse',
      'mcp__tracker__slow',
    ]);
    expect(names).not.toContain('ToolSearch');
    const getIssue = first.tools!.find((t: { name: string }) => t.name === 'mcp__tracker__get_issue');
    expect(getIssue).toMatchObject({
      description: 'Fetch one issue of the tracker by its number.',
      input_schema: { type: 'object', properties: { number: { type: 'integer' } }, required: ['number'] },
    });

    const results = Object.fromEntries(res.json.events.filter((e: any) => e.type === 'tool_result').map((e: any) => [e.toolUseId, e]));
    expect(Object.keys(results)).toHaveLength(9);
    expect(results.t_get).toMatchObject({ isError: false, content: [{ type: 'text', text: 'Issue #7: the build is red' }] });
    expect(results.t_count).toMatchObject({ isError: false, content: '{"open":3,"closed":9}' });
    expect(results.t_att).toMatchObject({
      isError: false,
      content: [
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PIXEL_PNG } },
        { type: 'text', text: '[Resource from tracker at tracker://issues/7/log] line one' },
        { type: 'text', text: '[Resource link: issue 7] tracker://issues/7 (the issue itself)' },
      ],
    });
    expect(results.t_refuse).toMatchObject({ isError: true, content: 'the tracker is read-only today' });
    expect(results.t_slow).toMatchObject({ isError: true, content: 'MCP server "tracker" tool "slow" timed out after 1s' });
    expect(results.t_drop).toMatchObject({ isError: true, content: expect.stringMatching(/^MCP server "tracker" tool "drop_connection" failed: \S/) });
    expect(JSON.stringify(results.t_big.content)).toMatch(/^"<persisted-output>\\nOutput too large/);
    expect(results.t_denied).toMatchObject({
      isError: true,
      content: '<tool_use_error>Error: No such tool available: mcp__tracker__close_issue_</tool_use_error>',
    });
    expect(results.t_badinput.isError).toBe(true);
    expect(String(results.t_badinput.content)).toContain('InputValidationError: mcp__tracker__get_issue failed');
    // The denied and the invalid calls never reached the server; the others did, with the header.
    expect(mcp.calls).not.toContain('close issue!');
    expect(mcp.calls.filter((c) => c === 'get_issue')).toHaveLength(1);
    expect(mcp.authorizations.length).toBeGreaterThan(0);
    expect(mcp.authorizations.every((a) => a === TOKEN)).toBe(true);
    // The header value is in no message, no event, no session view.
    const messages = await api.messages(sessionId);
    expect(JSON.stringify(messages)).not.toContain('mcp-secret-token');
    expect(res.text).not.toContain('mcp-secret-token');
    expect((await api.request('GET', `/v1/sessions/${sessionId}`)).text).not.toContain('mcp-secret-token');
  });

  it('removes every tool of a server denied as `mcp__server` or `mcp__server__*`', { timeout: 60_000 }, async () => {
    const { stack, api } = env;
    for (const rule of ['mcp__tracker', 'mcp__tracker__*']) {
      const created = await api.request('POST', '/v1/sessions', { settings: settings({ rules: { deny: [rule] } }) });
      const before = stack.model!.requests.length;
      stack.model!.enqueue({ content: [use('t_x', 'mcp__tracker__get_issue', { number: 1 })] }, text('ok'));
      const res = await api.turn(created.json.id, 'try');
      expect(res.json.stopReason).toBe('end_turn');
      const names = stack.model!.requests[before]!.body.tools!.map((t: { name: string }) => t.name);
      expect(names.filter((n: string) => n.startsWith('mcp__'))).toEqual([]);
      const result = res.json.events.find((e: any) => e.type === 'tool_result');
      expect(result).toMatchObject({ isError: true, content: '<tool_use_error>Error: No such tool available: mcp__tracker__get_issue</tool_use_error>' });
    }
  });

  it('refuses a server the outbound policy would never call (400), on create and on PATCH', { timeout: 60_000 }, async () => {
    const { api } = env;
    const refused = await api.request('POST', '/v1/sessions', { settings: { mcpServers: { tracker: { type: 'http', url: 'http://127.0.0.1:1/mcp' } } } });
    expect(refused.status).toBe(400);
    expect(refused.json.error.code).toBe('outbound_refused');
    expect(refused.text).toContain('STRATUS_PRIVATE_NETWORK_ALLOW');
    const plain = await api.request('POST', '/v1/sessions', {
      settings: { mcpServers: { remote: { type: 'http', url: 'http://example.com/mcp' } }, allowedDomains: ['example.com'] },
    });
    expect(plain.status).toBe(400);
    expect(plain.json.error.message).toContain('plain http://');
    const created = await api.request('POST', '/v1/sessions', { settings: settings() });
    expect(created.status).toBe(201);
    const patched = await api.request('PATCH', `/v1/sessions/${created.json.id}`, {
      settings: { mcpServers: { tracker: { type: 'http', url: `https://10.0.0.1:${mcp.port}/mcp` } } },
    });
    expect(patched.status).toBe(400);
    expect(patched.json.error.message).toContain('10.0.0.1 is a private address, and STRATUS_PRIVATE_NETWORK_ALLOW does not allow it');
    const repatched = await api.request('PATCH', `/v1/sessions/${created.json.id}`, {
      settings: { mcpServers: { tracker: { type: 'sse', url: mcp.url, headers: { 'X-Api-Key': 'other-secret-value' } } } },
    });
    expect(repatched.status).toBe(200);
    expect(repatched.json.mcpServers).toEqual({ tracker: { type: 'sse', url: mcp.url, headers: { 'X-Api-Key': '[redacted]' } } });
    expect(repatched.text).not.toContain('other-secret-value');
  });

  it('leaves out the tools of a server that cannot be reached, and the turn goes on', { timeout: 60_000 }, async () => {
    const { stack, api } = env;
    const created = await api.request('POST', '/v1/sessions', {
      settings: { ...settings(), mcpServers: { gone: { type: 'http', url: 'http://127.0.0.1:9/mcp' }, tracker: { type: 'http', url: mcp.url } } },
    });
    expect(created.status).toBe(201);
    const before = stack.model!.requests.length;
    stack.model!.enqueue(text('fine'));
    const res = await api.turn(created.json.id, 'hello');
    expect(res.json.stopReason).toBe('end_turn');
    const names = stack.model!.requests[before]!.body.tools!.map((t: { name: string }) => t.name);
    expect(names.some((n: string) => n.startsWith('mcp__gone__'))).toBe(false);
    expect(names).toContain('mcp__tracker__get_issue');
  });
});
