import { writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentLogId } from '../../functions/stores/agent-log.ts';
import { agentCall } from '../support/agent-requests.ts';
import { bash, text, unscripted, useLocalStack } from '../support/stack-fixture.ts';
import { until } from '../support/until.ts';

/**
 * A repository's `.claude/settings.json`, through the real path: the session created over the
 * API with the file in its workspace, the scripted model emitting the calls, the runner reading
 * the file and running commands and hooks in its sandbox, and the request the model receives next.
 */
const DENIED_RM = 'Permission to use Bash with command rm -f a.txt has been denied.';
const NO_ONE_TO_ASK = /^Permission to use Bash has been denied because Claude Code is running in don't ask mode\./;

describe('repository settings (.claude/settings.json)', () => {
  const fx = useLocalStack({ brain: unscripted });

  const createSession = async (files: Record<string, string>, settings: Record<string, unknown> = {}) => {
    const res = await fx.api.request('POST', '/v1/sessions', { files: { 'a.txt': 'keep me\n', ...files }, settings });
    expect(res.status).toBe(201);
    return res.json.id as string;
  };
  const settingsFile = (value: unknown) => ({ '.claude/settings.json': typeof value === 'string' ? value : JSON.stringify(value) });
  const runCalls = async (sessionId: string, commands: string[]) => {
    const before = fx.stack.model!.requests.length;
    fx.stack.model!.enqueue(...commands.map((command, i) => ({ content: [bash(`toolu_${i}`, command)] })), text('Done.'));
    const turn = await fx.api.turn(sessionId, 'go');
    expect(turn.status).toBe(200);
    const requests = fx.stack.model!.requests.slice(before).map((r) => r.body);
    return {
      turn: turn.json,
      results: turn.json.events.filter((e: any) => e.type === 'tool_result'),
      notices: turn.json.events.filter((e: any) => e.type === 'notice').map((e: any) => e.message),
      requests,
    };
  };
  /** The tool_result the model received for the call `toolUseId`, in the request after it. */
  const sentResult = (requests: any[], toolUseId: string) => {
    for (const body of requests) {
      for (const m of body.messages) {
        if (m.role !== 'user' || typeof m.content === 'string') continue;
        const found = m.content.find((b: any) => b.type === 'tool_result' && b.tool_use_id === toolUseId);
        if (found) return { result: found, message: m };
      }
    }
    throw new Error(`no tool_result for ${toolUseId}`);
  };
  const readFile = async (sessionId: string, rel: string) => {
    const res = await fx.api.request('GET', `/v1/sessions/${sessionId}/workspace/files/${rel}`);
    return res.status === 200 ? res.text : undefined;
  };

  it('a deny rule blocks rm in a session that bypasses permissions, and the model gets the reason', async () => {
    const sessionId = await createSession(
      {
        ...settingsFile({ permissions: { deny: ['Bash(rm:*)'] } }),
        // Never read in the cloud: its deny rule does not apply.
        '.claude/settings.local.json': JSON.stringify({ permissions: { deny: ['Bash(ls:*)'] } }),
      },
      { permissionMode: 'bypassPermissions' },
    );
    const { results, requests, notices } = await runCalls(sessionId, ['rm -f a.txt', 'ls a.txt']);
    expect(results.map((r: any) => [r.isError, r.content])).toEqual([
      [true, DENIED_RM],
      [false, 'a.txt'],
    ]);
    expect(sentResult(requests, 'toolu_0').result).toMatchObject({ type: 'tool_result', is_error: true, content: DENIED_RM });
    expect(notices).toEqual([]);
    expect(await readFile(sessionId, 'a.txt')).toBe('keep me\n');
  });

  it("joins the session's rules: its allow lets a command run unasked, a deny or ask from anywhere beats an allow", async () => {
    const sessionId = await createSession(settingsFile({ permissions: { allow: ['Bash(touch:*)', 'Bash(mkdir:*)'], ask: ['Bash(cp:*)'] } }), {
      permissionMode: 'default',
      unattended: true,
      rules: { deny: ['Bash(mkdir:*)'], allow: ['Bash(cp:*)'] },
    });
    const { results } = await runCalls(sessionId, ['touch made.txt', 'mkdir d', 'cp a.txt b.txt', 'tee c.txt < a.txt']);
    expect(results[0]).toMatchObject({ isError: false });
    expect(results[1]).toMatchObject({ isError: true, content: 'Permission to use Bash with command mkdir d has been denied.' });
    expect(results[2].isError).toBe(true);
    expect(results[2].content).toMatch(NO_ONE_TO_ASK);
    // No rule covers it: in default mode it would be asked about, and nobody can answer.
    expect(results[3].content).toMatch(NO_ONE_TO_ASK);
    expect(await readFile(sessionId, 'made.txt')).toBe('');
    expect(await readFile(sessionId, 'b.txt')).toBeUndefined();
  });

  it('runs a command hook inside the sandbox: it cannot see a host file, and exit 2 blocks the call with its stderr for the model', async () => {
    const hostFile = path.join(tmpdir(), `stratus-host-secret-${process.pid}.txt`);
    writeFileSync(hostFile, 'HOST-SECRET\n');
    try {
      const hook = `cat > /workspace/hook-input.json; cat ${hostFile} >&2; echo "pwd=$(pwd) uid=$(id -u)" >&2; exit 2`;
      const sessionId = await createSession(settingsFile({ hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: hook }] }] } }), {
        permissionMode: 'bypassPermissions',
      });
      const { results, requests } = await runCalls(sessionId, ['touch ran.txt']);
      const expected = `PreToolUse:Bash hook error: [${hook}]: cat: ${hostFile}: No such file or directory\npwd=/workspace uid=1000\n`;
      expect(results.map((r: any) => [r.isError, r.content])).toEqual([[true, expected]]);
      expect(sentResult(requests, 'toolu_0').result).toMatchObject({ is_error: true, content: expected });
      expect(await readFile(sessionId, 'ran.txt')).toBeUndefined();
      // The hook's stdin was the call, in the shape repository hooks read; what it wrote was published.
      expect(JSON.parse((await readFile(sessionId, 'hook-input.json'))!)).toEqual({
        session_id: sessionId,
        cwd: '/workspace',
        permission_mode: 'bypassPermissions',
        hook_event_name: 'PreToolUse',
        tool_name: 'Bash',
        tool_input: { command: 'touch ran.txt' },
        tool_use_id: 'toolu_0',
      });
    } finally {
      rmSync(hostFile, { force: true });
    }
  });

  it("reads a hook's JSON answer: a PreToolUse deny with its reason, PostToolUse context for the model, matchers", async () => {
    const deny = `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no touching"}}'`;
    const context = `echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"remember the changelog"}}'`;
    const sessionId = await createSession(
      settingsFile({
        hooks: {
          PreToolUse: [
            { matcher: 'Bash', hooks: [{ type: 'command', command: `if grep -q touch; then ${deny}; fi` }] },
            { matcher: 'Read', hooks: [{ type: 'command', command: 'exit 2' }] },
          ],
          PostToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: context }] }],
        },
      }),
      { permissionMode: 'bypassPermissions' },
    );
    const { results, requests } = await runCalls(sessionId, ['touch x.txt', 'echo hi']);
    expect(results.map((r: any) => [r.isError, r.content])).toEqual([
      [true, 'no touching'],
      [false, 'hi'],
    ]);
    // Beside the refusal, which command refused.
    const refused = sentResult(requests, 'toolu_0').message.content;
    expect(refused).toContainEqual(
      expect.objectContaining({
        type: 'text',
        text: `<system-reminder>\nPreToolUse:Bash hook blocking error from command: "if grep -q touch; then ${deny}; fi": no touching\n</system-reminder>`,
      }),
    );
    const after = sentResult(requests, 'toolu_1').message.content;
    expect(after).toContainEqual(
      expect.objectContaining({
        type: 'text',
        text: '<system-reminder>\nPostToolUse:Bash hook additional context: remember the changelog\n</system-reminder>',
      }),
    );
  });

  it('gives its env to Bash and hooks in the sandbox, never to the harness', async () => {
    const sessionId = await createSession(
      settingsFile({
        // Were it the harness's, the model calls would go nowhere.
        env: { REPO_SETTINGS_VAR: 'from-the-repo', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' },
        hooks: {
          PostToolUse: [
            { matcher: 'Bash', hooks: [{ type: 'command', command: 'echo "hook sees $REPO_SETTINGS_VAR in $CLAUDE_PROJECT_DIR" > /workspace/hook-env.txt' }] },
          ],
        },
      }),
      { permissionMode: 'bypassPermissions' },
    );
    const { turn, results } = await runCalls(sessionId, ['echo "$REPO_SETTINGS_VAR $ANTHROPIC_BASE_URL"']);
    expect(results.map((r: any) => r.content)).toEqual(['from-the-repo http://127.0.0.1:9']);
    expect(turn.stopReason).toBe('end_turn');
    expect(await readFile(sessionId, 'hook-env.txt')).toBe('hook sees from-the-repo in /workspace\n');
    expect(process.env.REPO_SETTINGS_VAR).toBeUndefined();
  });

  it("refuses what would widen the operator's or tenant's settings, with notes the client sees", async () => {
    const sessionId = await createSession(
      settingsFile({
        sandbox: { network: { allowedDomains: ['example.com'] } },
        mcpServers: { tracker: { type: 'http', url: 'https://mcp.example.com/mcp' } },
        permissions: { defaultMode: 'bypassPermissions', allow: ['Bash(echo:*)'] },
        hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'http', url: 'https://hooks.example.com/' }] }] },
      }),
      { permissionMode: 'default', unattended: true },
    );
    const { results, notices, turn } = await runCalls(sessionId, ['touch x.txt', 'echo still-allowed']);
    expect(notices).toEqual([
      '.claude/settings.json: "sandbox" refused: network access and sandbox policy come from the session and the deployment, never from the repository.',
      '.claude/settings.json: "mcpServers" refused: MCP servers come from the session\'s settings, never from the repository.',
      '.claude/settings.json: "permissions.defaultMode" refused: the permission mode is the session\'s.',
      '.claude/settings.json: a "PreToolUse" hook of type "http" refused: a repository\'s hooks may only be commands, which run in the sandbox.',
    ]);
    expect(turn.events.filter((e: any) => e.type === 'notice').every((e: any) => e.source === '.claude/settings.json')).toBe(true);
    // The mode stayed the session's (nobody to ask: denied); the rest of the file still applies.
    expect(results[0].content).toMatch(NO_ONE_TO_ASK);
    expect(results[1]).toMatchObject({ isError: false, content: 'still-allowed' });
    const session = await fx.api.request('GET', `/v1/sessions/${sessionId}`);
    expect(session.json.settings?.allowedDomains).toBeUndefined();
    expect(session.json.settings?.mcpServers).toBeUndefined();
  });

  it('a malformed file or a malformed rule gives a note, and the turn goes on', async () => {
    const broken = await createSession(settingsFile('{"permissions": {"deny": ["Bash(rm:*)"]'), { permissionMode: 'bypassPermissions' });
    const first = await runCalls(broken, ['echo ok']);
    expect(first.turn.stopReason).toBe('end_turn');
    expect(first.results.map((r: any) => r.content)).toEqual(['ok']);
    expect(first.notices).toHaveLength(1);
    expect(first.notices[0]).toMatch(/^\.claude\/settings\.json is not valid JSON \(.+\); none of it applies\.$/);

    const badRule = await createSession(settingsFile({ permissions: { deny: ['Bash(rm:*', 'Bash(rm:*)'] } }), { permissionMode: 'bypassPermissions' });
    const second = await runCalls(badRule, ['rm -f a.txt']);
    expect(second.notices).toEqual(['.claude/settings.json: not a permission rule, skipped: "Bash(rm:*".']);
    expect(second.results.map((r: any) => r.content)).toEqual([DENIED_RM]);
  });

  it('holds in a background sub-agent, which reads the settings in its own invocation', async () => {
    const sessionId = await createSession(settingsFile({ permissions: { deny: ['Bash(rm:*)'] } }), { permissionMode: 'bypassPermissions' });
    const call = agentCall('toolu_bg', { description: 'clean up', prompt: 'SUB: clean up', subagent_type: 'general-purpose', run_in_background: true });
    fx.stack.model!.enqueue(
      { content: [call], forFirstText: 'clean up in the background' },
      { ...text('Launched.'), forFirstText: 'clean up in the background' },
      { content: [bash('toolu_sub_rm', 'rm -f a.txt')], forFirstText: 'SUB: clean up' },
      { ...text('Could not.'), forFirstText: 'SUB: clean up' },
    );
    const turn = await fx.api.turn(sessionId, 'clean up in the background');
    expect(turn.json.stopReason).toBe('end_turn');
    const record = await until(
      () => fx.stack.deps.backgroundAgents.get(agentLogId(sessionId, 'agent_toolu_bg')),
      (r) => r !== undefined && r.status !== 'running',
    );
    expect(record?.status).toBe('completed');
    const log = await fx.api.request('GET', `/v1/sessions/${sessionId}/agents/agent_toolu_bg/messages`);
    const result = log.json.messages.flatMap((m: any) => (Array.isArray(m.content) ? m.content : [])).find((b: any) => b.type === 'tool_result');
    expect(result).toMatchObject({ tool_use_id: 'toolu_sub_rm', is_error: true, content: DENIED_RM });
    expect(await readFile(sessionId, 'a.txt')).toBe('keep me\n');
  });

  it('an interrupt kills a running hook command in the runner, as it kills a Bash command', async () => {
    const sessionId = await createSession(
      settingsFile({
        hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'sleep 120', timeout: 300 }] }] },
      }),
      { permissionMode: 'bypassPermissions' },
    );
    fx.stack.model!.enqueue({ content: [bash('toolu_hooked', 'touch ran.txt')] });
    const started = await fx.api.request('POST', `/v1/sessions/${sessionId}/turns`, { prompt: 'go' }, { prefer: 'respond-async' });
    expect(started.status).toBe(202);
    const eventsUrl = `/v1/sessions/${sessionId}/turns/${started.json.turnId}/events`;
    await until(
      () => fx.api.request('GET', eventsUrl),
      (res) => res.json.events.some((e: any) => (e.event ?? e).type === 'tool_use'),
    );
    // Let the hook's command reach the runner.
    await new Promise((r) => setTimeout(r, 1_000));
    const interrupted = await fx.api.request('POST', `/v1/sessions/${sessionId}/turns/${started.json.turnId}/interrupt`);
    // 200 means the turn has ended: the hook returned, so its 120 s command was killed.
    expect(interrupted.status).toBe(200);
    expect(interrupted.json).toMatchObject({ state: 'stopped', lastTurn: { stopReason: 'interrupted' } });
    expect(await readFile(sessionId, 'ran.txt')).toBeUndefined();
  });
});
