import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMcpDemoServer, type McpDemoServer } from '../../local/mcp-demo-server.ts';
import { startCountingServer, type CountingServer } from '../support/counting-server.ts';
import { text, unscripted, useLocalStack } from '../support/stack-fixture.ts';

/**
 * Calls the API side makes on a session's behalf (hooks, MCP), attacked through the real path: a
 * session configured over the HTTP API, a turn on the local stack, servers on loopback. The
 * operator's list (STRATUS_PRIVATE_NETWORK_ALLOW) names exactly the servers a test means to allow.
 */
const SECRET = 'outbound-hook-secret-0123456789';
const LOOPBACK_SPELLINGS = ['127.0.0.1', '127.1', '2130706433', '0x7f000001', '[::1]', '0.0.0.0', '[::ffff:127.0.0.1]'];
const use = (id: string, name: string, input: Record<string, unknown> = {}) => ({ type: 'tool_use' as const, id, name, input });
const operatorAllows = (privateNetworkAllow: string[], extra: Record<string, unknown> = {}) => ({
  model: {},
  turn: {},
  api: {},
  observability: {},
  outbound: { privateNetworkAllow },
  ...extra,
});
const toolResults = (res: { json: { events: { type: string; toolUseId?: string; content?: unknown }[] } }) =>
  Object.fromEntries(res.json.events.filter((e) => e.type === 'tool_result').map((e) => [e.toolUseId, e]));

describe('outbound calls from the API side: hooks and MCP under the one policy', () => {
  let victim: CountingServer;
  let hook: CountingServer;
  let redirecting: CountingServer;
  let collector: CountingServer;
  let mcp: McpDemoServer;
  beforeAll(async () => {
    victim = await startCountingServer();
    collector = await startCountingServer();
    hook = await startCountingServer((req, res) => res.end(req.path === '/html' ? 'SECRET-PAGE <html>internal admin console</html>' : ''));
    redirecting = await startCountingServer((_req, res) => {
      res.writeHead(307, { location: `http://127.0.0.1:${collector.port}/collect` });
      res.end();
    });
    mcp = await startMcpDemoServer({ sessions: true });
  });
  afterAll(async () => {
    for (const server of [victim, collector, hook, redirecting, mcp]) await server?.close();
  });
  // Allowed: the hook server, the redirecting one and the MCP server; not the victim, not the collector.
  const env = useLocalStack(() => ({
    brain: unscripted,
    github: { webhookSecret: 'webhook-secret' },
    settings: operatorAllows([`127.0.0.1:${hook.port}`, `127.0.0.1:${redirecting.port}`, `127.0.0.1:${mcp.port}`]),
  }));
  const hookSettings = (url: string) => ({ hooks: [{ event: 'PreToolUse', matcher: 'Bash', url, secret: SECRET, failMode: 'closed' }] });

  /** One turn that runs `echo hi` under the session's hooks; the Bash result. */
  async function bashResult(sessionId: string) {
    env.stack.model!.enqueue({ content: [use('toolu_echo', 'Bash', { command: 'echo hi' })] }, text('done'));
    const res = await env.api.turn(sessionId, 'go');
    expect(res.status).toBe(200);
    return toolResults(res).toolu_echo as { content: string; isError: boolean };
  }

  it('refuses a hook at loopback in every spelling when it is configured (400), and calls nothing', async () => {
    for (const host of LOOPBACK_SPELLINGS) {
      for (const scheme of ['http', 'https']) {
        const url = `${scheme}://${host}:${victim.port}/hook`;
        const res = await env.api.request('POST', '/v1/sessions', { settings: hookSettings(url) });
        expect([url, res.status, res.json?.error?.code]).toEqual([url, 400, 'outbound_refused']);
        expect(res.json.error.message).toContain('settings.hooks[0].url');
      }
    }
    const https = await env.api.request('POST', '/v1/sessions', { settings: hookSettings(`https://2130706433:${victim.port}/hook`) });
    expect(https.json.error.message).toBe(
      `Invalid hooks: the API would never call "settings.hooks[0].url" (127.0.0.1 is a loopback address, and STRATUS_PRIVATE_NETWORK_ALLOW does not allow it).`,
    );
    expect(victim.seen.connections).toBe(0);
  });

  it('refuses at call time a hook whose name resolves to loopback: the call is blocked and the server sees no connection', { timeout: 60_000 }, async () => {
    const created = await env.api.request('POST', '/v1/sessions', { settings: hookSettings(`https://localhost:${victim.port}/hook`) });
    expect(created.status).toBe(201);
    const result = await bashResult(created.json.id);
    expect(victim.seen.connections).toBe(0);
    expect(result).toMatchObject({
      isError: true,
      content: `PreToolUse:Bash hook error: hook PreToolUse:localhost:${victim.port} failed: Refused to call https://localhost:${victim.port}: localhost resolves to 127.0.0.1, which is a loopback address, and STRATUS_PRIVATE_NETWORK_ALLOW does not allow it.`,
    });
  });

  it("does not follow a hook endpoint's redirect: the unlisted host never receives the body or its signature", { timeout: 60_000 }, async () => {
    const created = await env.api.request('POST', '/v1/sessions', { settings: hookSettings(`http://127.0.0.1:${redirecting.port}/hook`) });
    expect(created.status).toBe(201);
    const result = await bashResult(created.json.id);
    expect(redirecting.seen.requests.at(-1)?.headers['x-stratus-signature']).toMatch(/^v1=/);
    expect(collector.seen.requests).toEqual([]);
    expect(collector.seen.connections).toBe(0);
    expect(result.content).toBe(
      `PreToolUse:Bash hook error: hook PreToolUse:127.0.0.1:${redirecting.port} failed: hook endpoint answered a redirect (307); hooks do not follow redirects`,
    );
  });

  it("keeps the bytes of a hook's non-JSON answer out of the tool result and the message log", { timeout: 60_000 }, async () => {
    const created = await env.api.request('POST', '/v1/sessions', { settings: hookSettings(`http://127.0.0.1:${hook.port}/html`) });
    const result = await bashResult(created.json.id);
    expect(hook.seen.requests.at(-1)?.path).toBe('/html');
    expect(result.content).not.toContain('SECRET');
    expect(JSON.stringify(await env.api.messages(created.json.id))).not.toContain('SECRET');
    expect(result.content).toBe(`PreToolUse:Bash hook error: hook PreToolUse:127.0.0.1:${hook.port} failed: hook endpoint answered a body that is not JSON`);
  });

  it('refuses an MCP server at a loopback spelling the operator does not allow (400)', async () => {
    const literal = await env.api.request('POST', '/v1/sessions', {
      settings: { mcpServers: { t: { type: 'http', url: `http://127.1:${victim.port}/mcp` } } },
    });
    expect(literal.status).toBe(400);
    expect(literal.json.error.message).toBe(
      `Invalid "settings.mcpServers": the API would never call "t" (plain http:// is used only for a host STRATUS_PRIVATE_NETWORK_ALLOW names (as the URL spells it, with its port); use https://).`,
    );
    const https = await env.api.request('POST', '/v1/sessions', {
      settings: { mcpServers: { t: { type: 'http', url: `https://[::ffff:7f00:1]:${victim.port}/mcp` } } },
    });
    expect(https.json.error.message).toContain('is a loopback address, and STRATUS_PRIVATE_NETWORK_ALLOW does not allow it');
  });

  it('never connects to an MCP server whose name resolves to loopback; its tools are left out', { timeout: 60_000 }, async () => {
    const byName = await env.api.request('POST', '/v1/sessions', {
      settings: { mcpServers: { t: { type: 'http', url: `https://localhost:${victim.port}/mcp` } }, allowedDomains: [`localhost:${victim.port}`] },
    });
    expect(byName.status).toBe(201);
    const before = env.stack.model!.requests.length;
    env.stack.model!.enqueue(text('fine'));
    expect((await env.api.turn(byName.json.id, 'hello')).json.stopReason).toBe('end_turn');
    expect(victim.seen.connections).toBe(0);
    const names = env.stack.model!.requests[before]!.body.tools!.map((t: { name: string }) => t.name);
    expect(names.filter((n: string) => n.startsWith('mcp__'))).toEqual([]);
  });

  it('lets a session list a non-public IP literal in allowedDomains only where the operator allows it (sessions, PATCH, GitHub repositories)', async () => {
    const { api } = env;
    for (const entry of ['127.0.0.1:9000', `127.0.0.1:${victim.port}`, '169.254.169.254', '[::1]', '10.0.0.1', '203.0.113.7']) {
      const res = await api.request('POST', '/v1/sessions', { settings: { allowedDomains: ['registry.npmjs.org', entry] } });
      expect([entry, res.status, res.json.error?.code]).toEqual([entry, 400, 'outbound_refused']);
      expect(res.json.error.message).toContain('STRATUS_PRIVATE_NETWORK_ALLOW');
    }
    const allowed = await api.request('POST', '/v1/sessions', { settings: { allowedDomains: [`127.0.0.1:${hook.port}`, '8.8.8.8', 'localhost'] } });
    expect(allowed.status).toBe(201);
    const patched = await api.request('PATCH', `/v1/sessions/${allowed.json.id}`, { settings: { allowedDomains: ['127.0.0.1:22'] } });
    expect(patched.status).toBe(400);
    expect(patched.json.error.message).toBe(
      'Invalid "settings.allowedDomains": "127.0.0.1:22" is a loopback address; a session may list one only when STRATUS_PRIVATE_NETWORK_ALLOW allows it (at port 22).',
    );
    const repository = await api.request('POST', '/v1/github/repositories', { repository: 'acme/outbound', settings: { allowedDomains: ['169.254.169.254'] } });
    expect(repository.status).toBe(400);
    expect(repository.json.error.code).toBe('outbound_refused');
    expect((await api.request('GET', '/v1/github/repositories/acme/outbound')).status).toBe(404);
  });

  it('reconnects and retries once when the MCP server restarted and forgot the session', { timeout: 90_000 }, async () => {
    const { stack, api } = env;
    const created = await api.request('POST', '/v1/sessions', {
      settings: { mcpServers: { tracker: { type: 'http', url: mcp.url } }, allowedDomains: [`127.0.0.1:${mcp.port}`], toolSearch: 'standard' },
    });
    expect(created.status).toBe(201);
    stack.model!.enqueue({ content: [use('t_one', 'mcp__tracker__get_issue', { number: 1 })] }, text('one'));
    expect(toolResults(await api.turn(created.json.id, 'first'))).toMatchObject({
      t_one: { isError: false, content: [{ type: 'text', text: 'Issue #1: the build is red' }] },
    });
    // Same port, new process state: the old session id now answers 404 "Session not found".
    const port = mcp.port;
    await mcp.close();
    mcp = await startMcpDemoServer({ sessions: true, port });
    stack.model!.enqueue({ content: [use('t_two', 'mcp__tracker__get_issue', { number: 2 })] }, text('two'));
    expect(toolResults(await api.turn(created.json.id, 'second'))).toMatchObject({
      t_two: { isError: false, content: [{ type: 'text', text: 'Issue #2: the build is red' }] },
    });
    expect(mcp.calls).toEqual(['get_issue']);
  });
});

describe('outbound calls when the operator allows all of loopback', () => {
  const env = useLocalStack({ brain: unscripted, settings: operatorAllows(['127.0.0.0/8', '::1/128']) });

  it("never lets a session name the stack's own endpoints (the stand-ins, the model server, the API itself)", async () => {
    const { stack, api } = env;
    const own = [stack.urls.dynamodb, stack.urls.s3, stack.urls.lambda, stack.urls.model, stack.apiUrl].map((u) => Number(new URL(u).port));
    for (const port of own) {
      for (const url of [`http://127.0.0.1:${port}/`, `https://localhost:${port}/`, `http://[::1]:${port}/`, `http://0.0.0.0:${port}/`]) {
        const res = await api.request('POST', '/v1/sessions', { settings: { hooks: [{ event: 'PreToolUse', url, secret: SECRET }] } });
        expect([url, res.status]).toEqual([url, 400]);
        expect(res.json.error.message).toContain("one of this Stratus deployment's own endpoints");
      }
      const mcpRes = await api.request('POST', '/v1/sessions', { settings: { mcpServers: { s3: { type: 'http', url: `http://127.1:${port}/` } } } });
      expect(mcpRes.json.error?.message).toContain('own endpoints');
    }
  });
});

describe('outbound calls on a deployment without sandbox egress (STRATUS_EGRESS=none)', () => {
  let hook: CountingServer;
  let mcp: McpDemoServer;
  beforeAll(async () => {
    hook = await startCountingServer((_req, res) => res.end(JSON.stringify({ additionalContext: 'hook reached' })));
    mcp = await startMcpDemoServer();
  });
  afterAll(async () => {
    await hook?.close();
    await mcp?.close();
  });
  const env = useLocalStack(() => ({ brain: unscripted, settings: operatorAllows([`127.0.0.1:${hook.port}`, `127.0.0.1:${mcp.port}`], { egress: 'none' }) }));

  it('reaches an allowed loopback hook, and MCP servers work although the sandbox has no egress', { timeout: 60_000 }, async () => {
    const { stack, api } = env;
    const created = await api.request('POST', '/v1/sessions', {
      settings: {
        hooks: [{ event: 'PreToolUse', matcher: 'mcp__tracker__get_issue', url: `http://127.0.0.1:${hook.port}/pre`, secret: SECRET }],
        mcpServers: { tracker: { type: 'http', url: mcp.url } },
        toolSearch: 'standard',
      },
    });
    expect(created.status).toBe(201);
    // The sandbox still has no network here: allowedDomains are refused as before.
    const egress = await api.request('POST', '/v1/sessions', { settings: { allowedDomains: ['registry.npmjs.org'] } });
    expect(egress.json.error.code).toBe('egress_unavailable');
    stack.model!.enqueue({ content: [use('t_get', 'mcp__tracker__get_issue', { number: 3 })] }, text('done'));
    const res = await api.turn(created.json.id, 'look');
    expect(toolResults(res)).toMatchObject({ t_get: { isError: false, content: [{ type: 'text', text: 'Issue #3: the build is red' }] } });
    expect(hook.seen.requests).toHaveLength(1);
    expect(JSON.parse(hook.seen.requests[0]!.body)).toMatchObject({ event: 'PreToolUse', toolName: 'mcp__tracker__get_issue' });
  });
});
