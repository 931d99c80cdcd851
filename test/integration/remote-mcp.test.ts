import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useLocalStack } from '../support/stack-fixture.ts';

type Answer = Record<string, any>;

/**
 * Stratus as an MCP server (/mcp, Streamable HTTP), driven by the official SDK's client against
 * the local stack with the scripted demo model (a `backticked command` in a prompt runs it).
 */
describe('the MCP endpoint', () => {
  const fx = useLocalStack({ turn: { heartbeatMs: 200 } });
  let client: Client;

  beforeAll(async () => {
    client = new Client({ name: 'stratus-test', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${fx.stack.apiUrl}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${fx.stack.token}` } },
    });
    await client.connect(transport);
  });
  afterAll(async () => {
    await client?.close();
  });

  const call = async (name: string, args: Record<string, unknown>, onprogress?: (p: { message?: string }) => void): Promise<Answer> => {
    const result = await client.callTool({ name, arguments: args }, undefined, onprogress ? { onprogress, timeout: 60_000 } : { timeout: 60_000 });
    if (result.isError) throw new Error(JSON.stringify(result.content));
    return result.structuredContent as Answer;
  };

  it('lists its tools and resource templates', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([
      'answer_permission',
      'create_session',
      'get_diff',
      'get_messages',
      'get_session',
      'interrupt',
      'run_prompt',
    ]);
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate).sort()).toEqual([
      'stratus://sessions/{sessionId}/files/{+path}',
      'stratus://sessions/{sessionId}/transcript',
    ]);
  });

  it('refuses a request without a tenant token', async () => {
    const res = await fetch(`${fx.stack.apiUrl}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(res.status).toBe(401);
  });

  it('runs a task to its end with progress, then shows its messages, diff, transcript and files', async () => {
    const created = await call('create_session', { files: { 'hello.txt': 'hello\n' } });
    expect(created.sessionId).toMatch(/^ses_/);
    const progress: string[] = [];
    const done = await call('run_prompt', { sessionId: created.sessionId, prompt: 'please run `echo changed > hello.txt && cat hello.txt`' }, (p) =>
      progress.push(p.message ?? ''),
    );
    expect(done).toMatchObject({ state: 'completed', stopReason: 'end_turn', pending: [] });
    expect(done.answer).toContain('ok: changed');
    expect(progress).toEqual(['Turn started', 'Running Bash', 'Bash finished', 'Turn ended: end_turn']);

    const messages = await call('get_messages', { sessionId: created.sessionId });
    expect(messages.messages.map((m: Answer) => m.kind)).toEqual(['prompt', 'assistant', 'tool_result', 'assistant']);
    const diff = await call('get_diff', { sessionId: created.sessionId });
    expect(diff.files).toMatchObject([{ path: 'hello.txt', kind: 'modified', additions: 1, deletions: 1 }]);
    expect(diff.files[0].diff).toContain('-hello\n+changed\n');

    const file = await client.readResource({ uri: `stratus://sessions/${created.sessionId}/files/hello.txt` });
    expect(file.contents).toEqual([{ uri: `stratus://sessions/${created.sessionId}/files/hello.txt`, mimeType: 'text/plain', text: 'changed\n' }]);
    const transcript = await client.readResource({ uri: `stratus://sessions/${created.sessionId}/transcript` });
    const lines = String((transcript.contents[0] as { text: string }).text)
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.filter((l) => l.type === 'user' || l.type === 'assistant')).toHaveLength(4);
    const listed = await client.listResources();
    expect(listed.resources.map((r) => r.uri)).toContain(`stratus://sessions/${created.sessionId}/transcript`);
  }, 90_000);

  it('answers a waiting permission, and the resumed turn runs to its end', async () => {
    const { sessionId } = await call('create_session', { permissionMode: 'default' });
    const waiting = await call('run_prompt', { sessionId, prompt: 'run `echo hi > made.txt`' });
    expect(waiting).toMatchObject({ state: 'input-required', stopReason: 'awaiting_permission' });
    expect(waiting.pending).toMatchObject([{ toolName: 'Bash', input: { command: 'echo hi > made.txt' } }]);
    expect((await call('get_session', { sessionId })).state).toBe('input-required');

    const progress: string[] = [];
    const resumed = await call('answer_permission', { sessionId, toolUseId: waiting.pending[0].toolUseId, decision: 'allow' }, (p) =>
      progress.push(p.message ?? ''),
    );
    expect(resumed).toMatchObject({ state: 'completed', stopReason: 'end_turn', pending: [] });
    expect(progress).toContain('Bash finished');
    const file = await client.readResource({ uri: `stratus://sessions/${sessionId}/files/made.txt` });
    expect(file.contents[0]).toMatchObject({ text: 'hi\n' });
    const again = await client.callTool({ name: 'answer_permission', arguments: { sessionId, decision: 'deny' } });
    expect(again.isError).toBe(true);
    expect(JSON.stringify(again.content)).toContain('no tool calls waiting');
  }, 90_000);

  it('starts a turn without waiting and interrupts it', async () => {
    const { sessionId } = await call('create_session', {});
    const started = await call('run_prompt', { sessionId, prompt: 'run `echo started; sleep 120`', wait: false });
    expect(started).toMatchObject({ state: 'working', turnId: expect.stringMatching(/^turn_/) });
    for (let i = 0; i < 100 && (await fx.api.request('GET', `/v1/sessions/${sessionId}/turns/${started.turnId}/events`)).text.indexOf('"tool_use"') < 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
    }
    expect((await call('get_session', { sessionId })).state).toBe('working');
    await new Promise((r) => setTimeout(r, 500));
    const stopped = await call('interrupt', { sessionId });
    expect(stopped).toMatchObject({ state: 'stopped', turnId: started.turnId, lastTurn: { stopReason: 'interrupted' } });
    expect((await call('get_session', { sessionId })).state).toBe('canceled');
    const nothing = await client.callTool({ name: 'interrupt', arguments: { sessionId } });
    expect(nothing.isError).toBe(true);
    const unknown = await client.callTool({ name: 'get_session', arguments: { sessionId: 'ses_nope' } });
    expect(unknown.isError).toBe(true);
  }, 90_000);
});
