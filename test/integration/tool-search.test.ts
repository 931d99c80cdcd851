import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalStack, type LocalStack } from '../../local/stack.ts';
import { apiClient } from '../support/api-client.ts';
import { startMcpDemoServer, type McpDemoServer } from '../../local/mcp-demo-server.ts';
import { text, unscripted } from '../support/stack-fixture.ts';
import { makeTempDir } from '../support/temp-dir.ts';

const use = (id: string, name: string, input: Record<string, unknown> = {}) => ({ type: 'tool_use' as const, id, name, input });
const toolNames = (body: { tools?: { name: string }[] }) => (body.tools ?? []).map((t) => t.name);

/**
 * ToolSearch on the local stack: MCP tools wait behind ToolSearch (mode `tst`, the default), a
 * search loads them, and the loaded tools are still there in a later turn on a fresh stack (new
 * process state: new deps, new MCP connections, the session reloaded from DynamoDB).
 */
describe('ToolSearch (deferred MCP tools)', () => {
  const tmp = makeTempDir();
  let mcp: McpDemoServer;
  let stack: LocalStack | undefined;
  const start = async () => {
    // The operator lets sessions reach exactly the demo MCP server (STRATUS_PRIVATE_NETWORK_ALLOW).
    const operator = { model: {}, turn: {}, api: {}, observability: {}, outbound: { privateNetworkAllow: [`127.0.0.1:${mcp.port}`] } };
    stack = await startLocalStack({ dataDir: tmp.dir, brain: unscripted, writeMetrics: () => undefined, settings: operator });
    return { stack, api: apiClient(stack.apiUrl, stack.token) };
  };
  beforeAll(async () => {
    mcp = await startMcpDemoServer();
  });
  afterAll(async () => {
    await stack?.stop();
    await mcp?.close();
    tmp.cleanup();
  });

  it('defers MCP tools, loads what a search finds, and keeps it loaded after a reload on a fresh stack', { timeout: 180_000 }, async () => {
    const first = await start();
    const created = await first.api.request('POST', '/v1/sessions', {
      settings: { mcpServers: { tracker: { type: 'http', url: mcp.url } } },
    });
    expect(created.status).toBe(201);
    const sessionId = created.json.id as string;
    first.stack.model!.enqueue(
      {
        content: [
          use('s_kw', 'ToolSearch', { query: 'ticket' }),
          use('s_none', 'ToolSearch', { query: 'select:NoSuchTool' }),
          use('s_early', 'mcp__tracker__count_issues'),
          use('s_bad', 'ToolSearch', { max_results: 2 }),
        ],
      },
      { content: [use('s_sel', 'ToolSearch', { query: 'select:mcp__tracker__count_issues, NoSuchTool' })] },
      text('Loaded.'),
    );
    const turn1 = await first.api.turn(sessionId, 'find the issue tools');
    expect(turn1.json.stopReason).toBe('end_turn');
    const [r1, r2, r3] = first.stack.model!.requests.slice(-3).map((r) => r.body);

    // First request: ToolSearch among the built-ins, no MCP schema, the deferred names first.
    expect(toolNames(r1!)).toContain('ToolSearch');
    expect(toolNames(r1!).some((n) => n.startsWith('mcp__'))).toBe(false);
    const deferredList = r1!.messages[0]!;
    expect(deferredList.role).toBe('user');
    expect(JSON.stringify(deferredList.content)).toContain(
      '<available-deferred-tools>\\nmcp__tracker__attachments\\nmcp__tracker__close_issue_\\nmcp__tracker__count_issues',
    );

    // The keyword search found get_issue through its search hint; select found nothing for an unknown name.
    const events = turn1.json.events.filter((e: any) => e.type === 'tool_result');
    const byId = Object.fromEntries(events.map((e: any) => [e.toolUseId, e]));
    expect(byId.s_kw).toMatchObject({ isError: false, content: [{ type: 'tool_reference', tool_name: 'mcp__tracker__get_issue' }] });
    expect(byId.s_none).toMatchObject({ isError: false, content: 'No matching deferred tools found' });
    // A deferred tool stays callable (the reference's pool has it); the model just had no schema for it.
    expect(byId.s_early.isError).toBe(false);
    expect(byId.s_bad).toMatchObject({
      isError: true,
      content: expect.stringContaining('InputValidationError: ToolSearch failed due to the following issue:\nThe required parameter `query` is missing'),
    });
    expect(byId.s_sel).toMatchObject({ content: [{ type: 'tool_reference', tool_name: 'mcp__tracker__count_issues' }] });

    // Second request: get_issue loaded (defer_loading), the list message unchanged, the built-in prefix unchanged.
    expect(toolNames(r2!).filter((n) => n.startsWith('mcp__'))).toEqual(['mcp__tracker__get_issue']);
    expect(r2!.tools!.find((t: any) => t.name === 'mcp__tracker__get_issue')).toMatchObject({ defer_loading: true });
    expect(JSON.stringify(r2!.messages[0])).toBe(JSON.stringify(deferredList));
    const builtins = (body: any) => JSON.stringify(body.tools.filter((t: any) => !t.name.startsWith('mcp__')).map(({ cache_control: _c, ...t }: any) => t));
    expect(builtins(r2)).toBe(builtins(r1));
    expect(toolNames(r3!).filter((n) => n.startsWith('mcp__'))).toEqual(['mcp__tracker__count_issues', 'mcp__tracker__get_issue']);
    const lastToolsOfTurn1 = JSON.stringify(r3!.tools);
    await first.stack.stop();
    stack = undefined;

    // A fresh stack on the same data: the next turn's first request already carries both tools.
    const second = await start();
    second.stack.model!.enqueue({ content: [use('c_get', 'mcp__tracker__get_issue', { number: 7 })] }, text('Done.'));
    const turn2 = await second.api.turn(sessionId, 'now read issue 7');
    expect(turn2.json.stopReason).toBe('end_turn');
    const [again] = second.stack.model!.requests.map((r) => r.body);
    expect(JSON.stringify(again!.tools)).toBe(lastToolsOfTurn1);
    expect(JSON.stringify(again!.messages[0])).toBe(JSON.stringify(deferredList));
    const result = turn2.json.events.find((e: any) => e.type === 'tool_result');
    expect(result).toMatchObject({ toolUseId: 'c_get', isError: false, content: [{ type: 'text', text: 'Issue #7: the build is red' }] });
  });

  it('sends every tool in `standard` mode, where ToolSearch does not exist', { timeout: 120_000 }, async () => {
    const { stack: s, api } = stack ? { stack, api: apiClient(stack.apiUrl, stack.token) } : await start();
    const created = await api.request('POST', '/v1/sessions', {
      settings: { mcpServers: { tracker: { type: 'http', url: mcp.url } }, toolSearch: 'standard' },
    });
    s.model!.enqueue({ content: [use('e_missing', 'ToolSearch', {})] }, text('ok'));
    const res = await api.turn(created.json.id, 'hello');
    const body = s.model!.requests.at(-2)!.body;
    expect(toolNames(body)).not.toContain('ToolSearch');
    expect(toolNames(body)).toContain('mcp__tracker__get_issue');
    expect(JSON.stringify(body.messages[0])).not.toContain('available-deferred-tools');
    const result = res.json.events.find((e: any) => e.type === 'tool_result');
    expect(result).toMatchObject({ isError: true, content: '<tool_use_error>Error: No such tool available: ToolSearch</tool_use_error>' });
  });
});
