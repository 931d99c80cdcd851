import { describe, expect, it } from 'vitest';
import { unscripted, useLocalStack } from '../support/stack-fixture.ts';

/**
 * The bypasses of prefix-matched Bash rules, performed through the real path: a session created
 * over the API with the rules, the scripted model emitting the Bash tool_use, the runner's
 * workspace checked afterwards. Each command would have run (the file made or removed) if its
 * rule were matched as a string prefix.
 */
const NO_ONE_TO_ASK = /^Permission to use Bash has been denied because Claude Code is running in don't ask mode\. IMPORTANT:/;
const denied = (command: string) => `Permission to use Bash with command ${command} has been denied.`;

const ALLOW_BYPASSES: [command: string, file: string][] = [
  ['echo hi && touch x1', 'x1'],
  ['echo hi ; touch x2', 'x2'],
  ['echo hi $(touch x3)', 'x3'],
  ['echo hi | tee x4', 'x4'],
  ['echo hi > x5', 'x5'],
  ['echo hi\ntouch x6', 'x6'],
];
const DENY_BYPASSES = ['echo x && rm a.txt', 'FOO=1 rm a.txt', '/bin/rm a.txt', 'timeout 5 rm a.txt', "bash -c 'rm a.txt'", 'echo x | xargs rm'];

describe('Bash rules hold for compound commands (through the API and the runner)', () => {
  const fx = useLocalStack({ brain: unscripted });

  const createSession = async (settings: Record<string, unknown>) => {
    const res = await fx.api.request('POST', '/v1/sessions', { files: { 'a.txt': 'keep me\n' }, settings: { permissionMode: 'default', ...settings } });
    expect(res.status).toBe(201);
    return res.json.id as string;
  };
  const fileExists = async (sessionId: string, rel: string) => {
    const res = await fx.api.request('GET', `/v1/sessions/${sessionId}/workspace/files/${rel}`);
    if (res.status === 200) return true;
    if (res.status === 400 && /^No file /.test(res.json?.error?.message)) return false;
    throw new Error(`download ${rel}: ${res.status} ${res.text}`);
  };
  // One call per model response: a failed Bash call cancels the Bash calls beside it.
  const runCalls = async (sessionId: string, commands: string[], end = true) => {
    fx.stack.model!.enqueue(
      ...commands.map((command, i) => ({ content: [{ type: 'tool_use' as const, id: `toolu_${i}`, name: 'Bash', input: { command } }] })),
    );
    if (end) fx.stack.model!.enqueue({ content: [{ type: 'text', text: 'Done.' }] });
    const turn = await fx.api.turn(sessionId, 'go');
    expect(turn.status).toBe(200);
    return turn.json;
  };

  it('does not let an allow rule for one part run the others', async () => {
    const sessionId = await createSession({ rules: { allow: ['Bash(echo hi:*)'] }, unattended: true });
    const turn = await runCalls(sessionId, [...ALLOW_BYPASSES.map(([c]) => c), 'echo hi && echo hi there']);
    const results = turn.events.filter((e: any) => e.type === 'tool_result');
    expect(results).toHaveLength(ALLOW_BYPASSES.length + 1);
    for (const result of results.slice(0, -1)) {
      expect(result.isError).toBe(true);
      expect(result.content).toMatch(NO_ONE_TO_ASK);
    }
    // Every part covered: it runs.
    expect(results.at(-1)).toMatchObject({ isError: false, content: 'hi\nhi there' });
    for (const [, file] of ALLOW_BYPASSES) expect(await fileExists(sessionId, file)).toBe(false);
  });

  it('asks a person about the part no rule covers, naming it', async () => {
    const sessionId = await createSession({ rules: { allow: ['Bash(echo hi:*)'] } });
    const turn = await runCalls(sessionId, ['echo hi && touch made.txt'], false);
    expect(turn.stopReason).toBe('awaiting_permission');
    expect(turn.events.filter((e: any) => e.type === 'permission_request').map((e: any) => e.message)).toEqual([
      'This Bash command contains multiple operations. The following part requires approval: touch made.txt',
    ]);
    expect(await fileExists(sessionId, 'made.txt')).toBe(false);
    // The rule offered for remembering covers the part asked about, not the part already allowed.
    const pending = await fx.api.request('GET', `/v1/sessions/${sessionId}/permissions`);
    expect(pending.json.pending.map((p: any) => p.suggestedRule)).toEqual(['Bash(touch made.txt:*)']);
  });

  it('denies a denied program wherever it sits in the command', async () => {
    const sessionId = await createSession({ rules: { deny: ['Bash(rm:*)'], allow: ['Bash'] } });
    const turn = await runCalls(sessionId, DENY_BYPASSES);
    const results = turn.events.filter((e: any) => e.type === 'tool_result');
    expect(results.map((r: any) => [r.isError, r.content])).toEqual([
      [true, denied('echo x && rm a.txt')],
      [true, denied('FOO=1 rm a.txt')],
      [true, denied('/bin/rm a.txt')],
      [true, denied('timeout 5 rm a.txt')],
      [true, denied("bash -c 'rm a.txt'")],
      [true, denied('xargs rm')],
    ]);
    expect(await fileExists(sessionId, 'a.txt')).toBe(true);
  });
});
