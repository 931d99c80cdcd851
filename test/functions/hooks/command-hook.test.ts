import { describe, expect, it } from 'vitest';
import { commandHookInput, createCommandHook, interpretCommandOutcome, type SandboxedHookRun } from '../../../functions/hooks/command-hook.ts';

const ok = (stdout: string, exitCode: number | null = 0, stderr = '') => ({ stdout, stderr, exitCode, timedOut: false });

describe('command hooks: the exit-code and JSON contract', () => {
  it('exit 2 blocks with the command and its stderr, or a note that there was none; after the call the block names its command', () => {
    expect(interpretCommandOutcome('lint.sh', ok('ignored', 2, 'no tabs\n'))).toEqual({ decision: 'deny', reason: '[lint.sh]: no tabs\n' });
    expect(interpretCommandOutcome('lint.sh', ok('only stdout', 2))).toEqual({ decision: 'deny', reason: '[lint.sh]: No stderr output' });
    expect(interpretCommandOutcome('lint.sh', ok('', 2, 'fix it\n'), 'PostToolUse')).toEqual({
      decision: 'deny',
      reason: '[lint.sh]: fix it\n',
      blockingCommand: 'lint.sh',
    });
  });

  it('exit 0: a JSON object is an answer; plain or broken output carries none', () => {
    expect(interpretCommandOutcome('h', ok('plain text\n'))).toBeUndefined();
    expect(interpretCommandOutcome('h', ok('{"decision": oops'))).toBeUndefined();
    expect(
      interpretCommandOutcome(
        'h',
        ok(
          '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"check","updatedInput":{"command":"ls"},"additionalContext":"ctx"}}',
        ),
      ),
    ).toEqual({
      decision: 'ask',
      reason: 'check',
      updatedInput: { command: 'ls' },
      additionalContext: 'ctx',
    });
    expect(interpretCommandOutcome('h', ok('{"decision":"block","reason":"legacy"}'))).toEqual({ decision: 'deny', reason: 'legacy', blockingCommand: 'h' });
    expect(interpretCommandOutcome('h', ok('{"decision":"approve"}'))).toEqual({ decision: 'allow' });
    expect(interpretCommandOutcome('h', ok('{"continue":false,"stopReason":"enough"}'))).toEqual({ continue: false, stopReason: 'enough' });
  });

  it('another exit status or a timeout is a failure (which does not block: failMode open)', () => {
    expect(() => interpretCommandOutcome('h', ok('', 1, 'warning'))).toThrow('the hook command exited with 1: warning');
    expect(() => interpretCommandOutcome('h', { stdout: '', stderr: '', exitCode: null, timedOut: true })).toThrow('the hook command timed out');
    expect(createCommandHook({ event: 'PreToolUse', command: 'x' }, { run: async () => ok(''), cwd: () => '/workspace' }).failMode).toBe('open');
  });

  it('gives the command its input as snake_case JSON on stdin, with its timeout', async () => {
    const calls: SandboxedHookRun[] = [];
    const hook = createCommandHook(
      { event: 'PostToolUse', matcher: 'Bash', command: 'cat', timeoutS: 5 },
      {
        run: async (call) => {
          calls.push(call);
          return ok('');
        },
        cwd: () => '/workspace/src',
      },
    );
    const input = {
      event: 'PostToolUse' as const,
      sessionId: 's1',
      turnId: 't1',
      toolName: 'Bash',
      toolUseId: 'tu1',
      toolInput: { command: 'ls' },
      permissionMode: 'default',
      toolResponse: 'a.txt',
    };
    const signal = new AbortController().signal;
    await hook.run(input, signal);
    expect(calls).toEqual([
      {
        command: 'cat',
        stdin: JSON.stringify(commandHookInput(input, '/workspace/src')),
        timeoutMs: 5000,
        stopKey: expect.stringMatching(/^hook_[0-9a-f]{12}_t1_tu1$/),
        signal,
      },
    ]);
    expect(JSON.parse(calls[0]!.stdin)).toEqual({
      session_id: 's1',
      cwd: '/workspace/src',
      permission_mode: 'default',
      hook_event_name: 'PostToolUse',
      tool_name: 'Bash',
      tool_input: { command: 'ls' },
      tool_response: 'a.txt',
      tool_use_id: 'tu1',
    });
  });
});
