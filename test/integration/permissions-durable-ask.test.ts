import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalStack, type LocalStack } from '../../local/stack.ts';
import { apiClient } from '../support/api-client.ts';
import { makeTempDir } from '../support/temp-dir.ts';
import { withoutCacheControl } from '../support/request-bodies.ts';

const unscripted = () => ({ error: { status: 500, type: 'api_error', message: 'unscripted' } });
const ASK_BASH = "Claude requested permissions to use Bash, but you haven't granted it yet.";
const REJECTED =
  "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed.";

describe('durable ask through the HTTP API', () => {
  const tmp = makeTempDir();
  let stack: LocalStack;
  let api: ReturnType<typeof apiClient>;

  beforeAll(async () => {
    stack = await startLocalStack({ dataDir: tmp.dir, brain: unscripted });
    api = apiClient(stack.apiUrl, stack.token);
  });
  afterAll(async () => {
    await stack.stop();
    tmp.cleanup();
  });

  const createSession = async (settings: Record<string, unknown>) => {
    const res = await api.request('POST', '/v1/sessions', { settings });
    expect(res.status).toBe(201);
    return res.json.id as string;
  };

  it('ends the turn waiting, survives a restart, and resumes on the answer', async () => {
    const sessionId = await createSession({ permissionMode: 'default' });
    stack.model!.enqueue({
      content: [
        { type: 'text', text: 'Writing.' },
        { type: 'tool_use', id: 'toolu_w', name: 'Bash', input: { command: 'echo hi > made.txt' } },
        { type: 'tool_use', id: 'toolu_r', name: 'Read', input: { file_path: '/workspace/made.txt' } },
      ],
    });
    const first = await api.turn(sessionId, 'make a file');
    expect(first.json.stopReason).toBe('awaiting_permission');
    expect(first.json.events.filter((e: any) => e.type === 'permission_request')).toEqual([
      { type: 'permission_request', toolUseId: 'toolu_w', toolName: 'Bash', input: { command: 'echo hi > made.txt' }, message: ASK_BASH },
    ]);
    expect(first.json.events.filter((e: any) => e.type === 'tool_result')).toEqual([]);
    expect((await api.request('GET', `/v1/sessions/${sessionId}`)).json.status).toBe('awaiting_permission');
    const pending = await api.request('GET', `/v1/sessions/${sessionId}/permissions`);
    expect(pending.json.pending.map((p: any) => [p.toolUseId, p.kind, p.message])).toEqual([
      ['toolu_w', 'ask', ASK_BASH],
      ['toolu_r', 'deferred', null],
    ]);
    const busy = await api.turn(sessionId, 'something else');
    expect(busy.status).toBe(409);
    expect(busy.json.error.code).toBe('awaiting_permission');

    // A new process on the same data answers: nothing waited in memory.
    await stack.stop();
    stack = await startLocalStack({ dataDir: tmp.dir, brain: unscripted });
    api = apiClient(stack.apiUrl, stack.token);
    stack.model!.enqueue({ content: [{ type: 'text', text: 'Done.' }] });
    const resumed = await api.request('POST', `/v1/sessions/${sessionId}/permissions/toolu_w`, {
      decision: 'allow',
      updatedInput: { command: 'echo edited > made.txt' },
      remember: true,
    });
    expect(resumed.status).toBe(200);
    expect(resumed.json.stopReason).toBe('end_turn');
    const results = resumed.json.events.filter((e: any) => e.type === 'tool_result');
    expect(results.map((r: any) => [r.toolUseId, r.isError, r.content])).toEqual([
      ['toolu_w', false, '(Bash completed with no output)'],
      ['toolu_r', false, '1\tedited\n2\t'],
    ]);
    const sent = stack.model!.requests.at(-1)!.body.messages;
    expect(withoutCacheControl(sent.at(-1)!.content)).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_w', content: '(Bash completed with no output)' },
      { type: 'tool_result', tool_use_id: 'toolu_r', content: '1\tedited\n2\t' },
    ]);
    const after = await api.request('GET', `/v1/sessions/${sessionId}/permissions`);
    expect(after.json).toMatchObject({ pending: [], rules: { allow: ['Bash(echo edited > made.txt)'] } });
    expect((await api.request('GET', `/v1/sessions/${sessionId}`)).json.status).toBe('idle');

    // The remembered rule lets the same command through next time without asking.
    stack.model!.enqueue(
      { content: [{ type: 'tool_use', id: 'toolu_again', name: 'Bash', input: { command: 'echo edited > made.txt' } }] },
      { content: [{ type: 'text', text: 'Again.' }] },
    );
    const again = await api.turn(sessionId, 'again');
    expect(again.json.stopReason).toBe('end_turn');
  });

  it('remembers an allow as the permission rule the person wrote, refusing one that is not a rule', async () => {
    const sessionId = await createSession({ permissionMode: 'default' });
    stack.model!.enqueue({ content: [{ type: 'tool_use', id: 'toolu_e1', name: 'Bash', input: { command: 'touch one.txt' } }] });
    expect((await api.turn(sessionId, 'say one')).json.stopReason).toBe('awaiting_permission');
    const bad = await api.request('POST', `/v1/sessions/${sessionId}/permissions/toolu_e1`, { decision: 'allow', rule: 'Bash(touch' });
    expect([bad.status, bad.json.error.message]).toEqual([400, expect.stringContaining('"Bash(touch"')]);
    stack.model!.enqueue({ content: [{ type: 'text', text: 'Said.' }] });
    const allowed = await api.request('POST', `/v1/sessions/${sessionId}/permissions/toolu_e1`, { decision: 'allow', rule: 'Bash(touch:*)' });
    expect(allowed.json.stopReason).toBe('end_turn');
    expect((await api.request('GET', `/v1/sessions/${sessionId}/permissions`)).json.rules).toEqual({ allow: ['Bash(touch:*)'] });
    // Another command the rule matches runs without asking.
    stack.model!.enqueue(
      { content: [{ type: 'tool_use', id: 'toolu_e2', name: 'Bash', input: { command: 'touch two.txt' } }] },
      { content: [{ type: 'text', text: 'Two.' }] },
    );
    const next = await api.turn(sessionId, 'say two');
    expect(next.json.stopReason).toBe('end_turn');
    expect(next.json.events.find((e: any) => e.type === 'tool_result')).toMatchObject({
      toolUseId: 'toolu_e2',
      isError: false,
      content: '(Bash completed with no output)',
    });
  }, 90_000);

  it('gives a denied call the rejection text, tracks the denial, and answers each call once', async () => {
    const sessionId = await createSession({ permissionMode: 'default' });
    stack.model!.enqueue({ content: [{ type: 'tool_use', id: 'toolu_rm', name: 'Bash', input: { command: 'rm -rf src' } }] });
    expect((await api.turn(sessionId, 'clean up')).json.stopReason).toBe('awaiting_permission');
    expect((await api.request('POST', `/v1/sessions/${sessionId}/permissions/toolu_nope`, { decision: 'deny' })).status).toBe(404);
    expect((await api.request('POST', `/v1/sessions/${sessionId}/permissions/toolu_rm`, { decision: 'perhaps' })).status).toBe(400);
    stack.model!.enqueue({ content: [{ type: 'text', text: 'Understood.' }] });
    const res = await api.request('POST', `/v1/sessions/${sessionId}/permissions/toolu_rm`, { decision: 'deny' });
    expect(res.json.events.find((e: any) => e.type === 'tool_result')).toMatchObject({ toolUseId: 'toolu_rm', isError: true, content: REJECTED });
    expect(res.json.events.find((e: any) => e.type === 'permission_denied')).toEqual({
      type: 'permission_denied',
      toolUseId: 'toolu_rm',
      toolName: 'Bash',
      count: 1,
      suggestion: 'Bash was denied 1 time in this session; add an allow or deny rule for it?',
    });
    expect((await api.request('POST', `/v1/sessions/${sessionId}/permissions/toolu_rm`, { decision: 'allow' })).status).toBe(404);
    const session = await api.request('GET', `/v1/sessions/${sessionId}`);
    expect(session.json.permissions.denials).toEqual([
      { tool: 'Bash', count: 1, suggestion: 'Bash was denied 1 time in this session; add an allow or deny rule for it?' },
    ]);
  });

  it("passes a deny answer's message to the model (deny-with-feedback)", async () => {
    const sessionId = await createSession({ permissionMode: 'default' });
    stack.model!.enqueue({ content: [{ type: 'tool_use', id: 'toolu_push', name: 'Bash', input: { command: 'git push --force' } }] });
    expect((await api.turn(sessionId, 'ship it')).json.stopReason).toBe('awaiting_permission');
    stack.model!.enqueue({ content: [{ type: 'text', text: 'I will open a pull request instead.' }] });
    const res = await api.request('POST', `/v1/sessions/${sessionId}/permissions/toolu_push`, {
      decision: 'deny',
      message: 'Never force-push; open a pull request instead.',
    });
    const expected =
      "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). To tell you how to proceed, the user said:\nNever force-push; open a pull request instead.";
    expect(res.json.events.find((e: any) => e.type === 'tool_result')).toMatchObject({ toolUseId: 'toolu_push', isError: true, content: expected });
    // The model got exactly that text as the call's result.
    const sent = stack.model!.requests.at(-1)!.body.messages.at(-1)!;
    expect(JSON.stringify(sent.content)).toContain('Never force-push; open a pull request instead.');
    // An empty message is refused.
    expect((await api.request('POST', `/v1/sessions/${sessionId}/permissions/toolu_push`, { decision: 'deny', message: '' })).status).toBe(400);
  });

  it('never waits in an unattended session: ask becomes deny and the turn goes on', async () => {
    const sessionId = await createSession({ permissionMode: 'default', unattended: true });
    stack.model!.enqueue(
      { content: [{ type: 'tool_use', id: 'toolu_u', name: 'Bash', input: { command: 'touch x' } }] },
      { content: [{ type: 'text', text: 'Could not.' }] },
    );
    const res = await api.turn(sessionId, 'try');
    expect(res.json.stopReason).toBe('end_turn');
    const result = res.json.events.find((e: any) => e.type === 'tool_result');
    expect(result.content).toMatch(/^Permission to use Bash has been denied because Claude Code is running in don't ask mode\. IMPORTANT: /);
  });

  it('applies deny rules from the session and from the turn, and rejects malformed rules', async () => {
    const bad = await api.request('POST', '/v1/sessions', { settings: { rules: { deny: ['Bash(ls'] } } });
    expect(bad.status).toBe(400);
    expect(bad.json.error.message).toContain('"settings.rules": not a permission rule: "Bash(ls"');
    const sessionId = await createSession({ rules: { deny: ['Bash(git push:*)'] } });
    stack.model!.enqueue(
      {
        content: [
          { type: 'tool_use', id: 'toolu_p', name: 'Bash', input: { command: 'git push origin main' } },
          { type: 'tool_use', id: 'toolu_e', name: 'Bash', input: { command: 'echo fine' } },
        ],
      },
      { content: [{ type: 'text', text: 'ok' }] },
    );
    const res = await api.request('POST', `/v1/sessions/${sessionId}/turns`, { prompt: 'go', permissions: { rules: { deny: ['Read'] } } });
    const results = res.json.events.filter((e: any) => e.type === 'tool_result');
    expect(results.map((r: any) => [r.toolUseId, r.content])).toEqual([
      ['toolu_p', 'Permission to use Bash with command git push origin main has been denied.'],
      // A refused Bash call is an error result from Bash: like the reference, it cancels its siblings.
      ['toolu_e', '<tool_use_error>Cancelled: parallel tool call Bash(git push origin main) errored</tool_use_error>'],
    ]);
    // A request-level deny of a whole tool hides it from the model for that turn.
    expect(stack.model!.requests.at(-1)!.body.tools!.map((t) => t.name)).toEqual([
      'Agent',
      'AskUserQuestion',
      'Bash',
      'Edit',
      'EnterPlanMode',
      'ExitPlanMode',
      'Glob',
      'Grep',
      'NotebookEdit',
      'Skill',
      'TaskOutput',
      'TaskStop',
      'TodoWrite',
      'WebFetch',
      'Write',
    ]);
  });
});

describe('session hooks through the HTTP API', () => {
  const tmp = makeTempDir();
  let stack: LocalStack;
  let api: ReturnType<typeof apiClient>;
  let hookServer: import('node:http').Server;
  let hookUrl: string;
  const SECRET = 'integration-hook-secret-0123456789';
  const verified: boolean[] = [];

  beforeAll(async () => {
    const { createServer } = await import('node:http');
    const { listenOnLoopback } = await import('../../local/net/listen.ts');
    const { signHookRequest } = await import('../../functions/hooks/http-hook.ts');
    hookServer = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const body = Buffer.concat(chunks).toString('utf8');
      verified.push(req.headers['x-stratus-signature'] === signHookRequest(SECRET, String(req.headers['x-stratus-timestamp']), body));
      const input = JSON.parse(body);
      if (input.toolInput.command.startsWith('rm')) return res.end(JSON.stringify({ decision: 'deny', reason: 'no deleting in this repo' }));
      res.end(JSON.stringify({ additionalContext: 'the repo uses pnpm' }));
    });
    hookUrl = await listenOnLoopback(hookServer);
    // The operator lets sessions reach exactly this loopback hook server (STRATUS_PRIVATE_NETWORK_ALLOW).
    const operator = { model: {}, turn: {}, api: {}, observability: {}, outbound: { privateNetworkAllow: [new URL(hookUrl).host] } };
    stack = await startLocalStack({ dataDir: tmp.dir, brain: unscripted, settings: operator });
    api = apiClient(stack.apiUrl, stack.token);
  });
  afterAll(async () => {
    await stack.stop();
    const { closeServer } = await import('../../local/net/listen.ts');
    await closeServer(hookServer);
    tmp.cleanup();
  });

  it("calls the session's signed PreToolUse hook, which denies a call and adds context to another", async () => {
    const created = await api.request('POST', '/v1/sessions', {
      settings: { hooks: [{ event: 'PreToolUse', matcher: 'Bash', url: `${hookUrl}/pre`, secret: SECRET }] },
    });
    expect(created.status).toBe(201);
    expect(created.json.permissions.hooks).toEqual([{ event: 'PreToolUse', matcher: 'Bash', url: `${hookUrl}/pre`, failMode: 'open' }]);
    const sessionId = created.json.id;
    stack.model!.enqueue(
      { content: [{ type: 'tool_use', id: 'toolu_rm', name: 'Bash', input: { command: 'rm -rf src' } }] },
      { content: [{ type: 'tool_use', id: 'toolu_echo', name: 'Bash', input: { command: 'echo hi' } }] },
      { content: [{ type: 'text', text: 'ok' }] },
    );
    const res = await api.turn(sessionId, 'go');
    const results = res.json.events.filter((e: any) => e.type === 'tool_result');
    expect(results.map((r: any) => [r.toolUseId, r.content])).toEqual([
      ['toolu_rm', 'PreToolUse:Bash hook error: no deleting in this repo'],
      ['toolu_echo', 'hi'],
    ]);
    expect(withoutCacheControl(stack.model!.requests.at(-1)!.body.messages.at(-1)!.content)).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_echo', content: 'hi' },
      { type: 'text', text: '<system-reminder>\nPreToolUse:Bash hook additional context: the repo uses pnpm\n</system-reminder>' },
    ]);
    expect(verified).toEqual([true, true]);
  });
});
