import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMcpDemoServer, type McpDemoServer } from '../../local/mcp-demo-server.ts';
import type { MessagesRequest } from '../../local/scripted-model/script.ts';
import { agentLogId } from '../../functions/stores/agent-log.ts';
import { agentCall, type ScriptedRoute } from '../support/agent-requests.ts';
import { text, unscripted, useLocalStack } from '../support/stack-fixture.ts';
import { until } from '../support/until.ts';

const toolNames = (body: MessagesRequest) => (body.tools ?? []).map((t) => t.name);
const mentions = (body: MessagesRequest, marker: string) => JSON.stringify(body.messages).includes(marker);

/**
 * A background sub-agent gets the session's tools as its turns get them: with MCP servers, that
 * includes the session's ToolSearch mode (ToolSearch is on the async allow-list), not only the
 * built-ins and the MCP tools.
 */
describe('background sub-agents follow the session ToolSearch mode', () => {
  let mcp: McpDemoServer;
  beforeAll(async () => {
    mcp = await startMcpDemoServer();
  });
  afterAll(async () => {
    await mcp?.close();
  });
  // The operator lets sessions reach exactly the demo MCP server (STRATUS_PRIVATE_NETWORK_ALLOW).
  const routed: { route: ScriptedRoute } = { route: () => undefined };
  const fx = useLocalStack(() => ({
    brain: (body) => routed.route(body) ?? unscripted(),
    settings: { model: {}, turn: {}, api: {}, observability: {}, outbound: { privateNetworkAllow: [`127.0.0.1:${mcp.port}`] } },
  }));

  async function backgroundTools(marker: string, toolSearch: 'tst' | 'standard'): Promise<string[]> {
    const { api, stack } = fx;
    const created = await api.request('POST', '/v1/sessions', { settings: { mcpServers: { tracker: { type: 'http', url: mcp.url } }, toolSearch } });
    expect(created.json.error).toBeUndefined();
    const sessionId = created.json.id as string;
    let parentCalls = 0;
    routed.route = (body) => {
      if (mentions(body, `PARENT-${marker}`)) {
        parentCalls += 1;
        if (parentCalls > 1) return text('Launched.');
        return {
          content: [agentCall(`toolu_${marker}`, { description: 'look', prompt: `SUB-${marker}`, subagent_type: 'general-purpose', run_in_background: true })],
        };
      }
      if (mentions(body, `SUB-${marker}`)) return text('Nothing to do.');
      return undefined;
    };
    expect((await api.turn(sessionId, `PARENT-${marker}`)).json).toMatchObject({ stopReason: 'end_turn' });
    const record = await until(
      () => stack.deps.backgroundAgents.get(agentLogId(sessionId, `agent_toolu_${marker}`)),
      (r) => r !== undefined && r.status !== 'running',
    );
    expect(record).toMatchObject({ status: 'completed' });
    const sub = stack.model!.requests.find((r) => mentions(r.body, `SUB-${marker}`) && !mentions(r.body, `PARENT-${marker}`))!;
    return toolNames(sub.body);
  }

  it('has ToolSearch in `tst` mode and not in `standard` mode, as the session turns do', { timeout: 120_000 }, async () => {
    const tst = await backgroundTools('TST', 'tst');
    expect(tst).toContain('ToolSearch');
    expect(tst).toContain('mcp__tracker__get_issue');
    const standard = await backgroundTools('STD', 'standard');
    expect(standard).not.toContain('ToolSearch');
    expect(standard).toContain('mcp__tracker__get_issue');
  });
});
