import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { HookDefinition } from '../../../functions/hooks/types.ts';
import { rulesFromLists } from '../../../functions/permissions/rule-syntax.ts';
import type { PermissionContext } from '../../../functions/permissions/types.ts';
import { bashTool } from '../../../functions/tools/bash-tool.ts';
import { createExternalTool } from '../../../functions/tools/external-tool.ts';
import { assembleToolPool } from '../../../functions/tools/registry.ts';
import { INTERRUPTED_MESSAGE, runToolUse, type ToolUseEnv } from '../../../functions/tools/run-tool-use.ts';
import { buildTool, type Tool } from '../../../functions/tools/tool.ts';
import { testContext } from '../../support/fake-tools.ts';

const echo = buildTool({
  name: 'Echo',
  inputSchema: z.strictObject({ text: z.string() }),
  description: 'echoes',
  async validateInput(input) {
    return input.text === 'bad' ? { ok: false, message: 'text must not be "bad".' } : { ok: true };
  },
  async call(input) {
    if (input.text === 'throw') throw new Error('boom');
    if (input.text === 'long') throw new Error('x'.repeat(6_000) + 'y'.repeat(6_000));
    return { data: input.text, newMessages: [{ type: 'text', text: 'note from Echo' }] };
  },
  mapToolResultToToolResultBlockParam: (data, id) => ({ type: 'tool_result', tool_use_id: id, content: `echo: ${data}` }),
});

const calls: unknown[] = [];
const external = createExternalTool({
  name: 'mcp__notes__add',
  description: 'adds a note',
  inputJSONSchema: { type: 'object', properties: { title: { type: 'string' } }, required: ['title'], additionalProperties: false },
  async call(input) {
    calls.push(input);
    return `added ${String(input.title)}`;
  },
});

function env(opts: { tools?: Tool[]; permissions?: Partial<PermissionContext>; hooks?: HookDefinition[] } = {}): ToolUseEnv {
  return {
    pool: assembleToolPool({ builtins: opts.tools ?? [echo], external: [external] }),
    permissions: { mode: 'bypassPermissions', rules: [], unattended: false, ...opts.permissions },
    hooks: opts.hooks ?? [],
  };
}

function fnHook(event: HookDefinition['event'], run: HookDefinition['run'], extra: Partial<HookDefinition> = {}): HookDefinition {
  return { name: `test-${event}`, event, timeoutMs: 1_000, failMode: 'open', run, ...extra };
}

const use = (name: string, input: unknown, id = 'toolu_1') => ({ id, name, input });

describe('runToolUse', () => {
  it("maps a successful call and passes on the tool's newMessages", async () => {
    const out = await runToolUse(use('Echo', { text: 'hi' }), testContext(), env());
    expect(out).toEqual({
      kind: 'result',
      result: { type: 'tool_result', tool_use_id: 'toolu_1', content: 'echo: hi' },
      extra: [{ type: 'text', text: 'note from Echo' }],
      stop: undefined,
      contextModifier: undefined,
    });
  });

  it('names an unknown tool', async () => {
    const out = await runToolUse(use('Nope', {}), testContext(), env());
    expect(out).toMatchObject({ result: { is_error: true, content: '<tool_use_error>Error: No such tool available: Nope</tool_use_error>' } });
  });

  it('reports a missing parameter in plain words', async () => {
    const out = await runToolUse(use('Echo', {}), testContext(), env());
    expect(out).toMatchObject({
      result: {
        is_error: true,
        content: '<tool_use_error>InputValidationError: Echo failed due to the following issue:\nThe required parameter `text` is missing</tool_use_error>',
      },
    });
  });

  it('passes on a validateInput refusal', async () => {
    const out = await runToolUse(use('Echo', { text: 'bad' }), testContext(), env());
    expect(out).toMatchObject({ result: { is_error: true, content: '<tool_use_error>text must not be "bad".</tool_use_error>' } });
  });

  it('turns a throw inside call into its text, cutting long texts in the middle', async () => {
    expect(await runToolUse(use('Echo', { text: 'throw' }), testContext(), env())).toMatchObject({ result: { is_error: true, content: 'boom' } });
    const long = await runToolUse(use('Echo', { text: 'long' }), testContext(), env());
    expect(long.kind === 'result' && long.result.content).toBe(`${'x'.repeat(5_000)}\n\n... [2000 characters truncated] ...\n\n${'y'.repeat(5_000)}`);
  });

  it('does not start a call once the turn was stopped', async () => {
    const controller = new AbortController();
    controller.abort();
    expect(await runToolUse(use('Echo', { text: 'hi' }), testContext(controller.signal), env())).toMatchObject({
      result: { is_error: true, content: INTERRUPTED_MESSAGE },
    });
  });

  it('refuses a call a deny rule covers, and marks it for denial tracking', async () => {
    const rules = rulesFromLists({ deny: ['Echo'] }, 'session').rules;
    const out = await runToolUse(use('Echo', { text: 'hi' }), testContext(), env({ permissions: { rules } }));
    expect(out).toMatchObject({ result: { is_error: true, content: 'Permission to use Echo has been denied.' }, denied: { toolName: 'Echo' } });
  });

  it('validates an external tool against the JSON schema it arrived with', async () => {
    const bad = await runToolUse(use('mcp__notes__add', { name: 'x' }), testContext(), env());
    expect(bad).toMatchObject({ result: { is_error: true } });
    expect(bad.kind === 'result' && bad.result.content).toContain('InputValidationError: mcp__notes__add failed due to the following issues:');
    const good = await runToolUse(use('mcp__notes__add', { title: 'x' }), testContext(), env());
    expect(good).toMatchObject({ result: { content: 'added x' } });
  });

  describe('with hooks', () => {
    it('lets a PreToolUse hook deny the call with its reason', async () => {
      const hooks = [fnHook('PreToolUse', async () => ({ decision: 'deny', reason: 'not on Fridays' }))];
      const out = await runToolUse(use('Echo', { text: 'hi' }), testContext(), env({ hooks }));
      expect(out).toMatchObject({ result: { is_error: true, content: 'PreToolUse:Echo hook error: not on Fridays' }, denied: { toolName: 'Echo' } });
    });

    it('lets a PreToolUse hook replace the input and add context for the model', async () => {
      const hooks = [
        fnHook('PreToolUse', async (input) => ({ updatedInput: { text: `${(input.toolInput as { text: string }).text}!` }, additionalContext: 'be brief' })),
      ];
      const out = await runToolUse(use('Echo', { text: 'hi' }), testContext(), env({ hooks }));
      expect(out).toMatchObject({
        result: { content: 'echo: hi!' },
        extra: [
          { type: 'text', text: '<system-reminder>\nPreToolUse:Echo hook additional context: be brief\n</system-reminder>' },
          { type: 'text', text: 'note from Echo' },
        ],
      });
    });

    it('makes a hook "allow" yield to a deny rule', async () => {
      const hooks = [fnHook('PreToolUse', async () => ({ decision: 'allow' }))];
      const rules = rulesFromLists({ deny: ['Echo'] }, 'policy').rules;
      const out = await runToolUse(use('Echo', { text: 'hi' }), testContext(), env({ hooks, permissions: { rules, mode: 'default' } }));
      expect(out).toMatchObject({ result: { content: 'Permission to use Echo has been denied.' } });
    });

    it('makes a hook "allow" yield to a Bash deny rule that matches one part of a compound command', async () => {
      const hooks = [fnHook('PreToolUse', async () => ({ decision: 'allow' }))];
      const rules = rulesFromLists({ deny: ['Bash(rm:*)'] }, 'policy').rules;
      const out = await runToolUse(
        use('Bash', { command: 'echo x && FOO=1 rm a.txt' }),
        testContext(),
        env({ tools: [bashTool], hooks, permissions: { rules, mode: 'default' } }),
      );
      expect(out).toMatchObject({ result: { is_error: true, content: 'Permission to use Bash with command echo x && FOO=1 rm a.txt has been denied.' } });
    });

    it('lets a hook "allow" skip the ask of default mode', async () => {
      const hooks = [fnHook('PreToolUse', async () => ({ decision: 'allow' }))];
      const out = await runToolUse(use('Echo', { text: 'hi' }), testContext(), env({ hooks, permissions: { mode: 'default' } }));
      expect(out).toMatchObject({ kind: 'result', result: { content: 'echo: hi' } });
    });

    it('asks when a hook asks, and denies instead in an unattended session', async () => {
      const hooks = [fnHook('PreToolUse', async () => ({ decision: 'ask' }))];
      expect(await runToolUse(use('Echo', { text: 'hi' }), testContext(), env({ hooks }))).toEqual({
        kind: 'ask',
        toolUseId: 'toolu_1',
        toolName: 'Echo',
        input: { text: 'hi' },
        message: 'Hook PreToolUse:Echo asked for confirmation for this tool',
      });
      const out = await runToolUse(use('Echo', { text: 'hi' }), testContext(), env({ hooks, permissions: { unattended: true } }));
      expect(out.kind === 'result' && out.result.content).toBe(
        "Permission to use Echo has been denied because Claude Code is running in don't ask mode. IMPORTANT: You *may* attempt to accomplish this action using other tools that might naturally be used to accomplish this goal, e.g. using head instead of cat. But you *should not* attempt to work around this denial in malicious ways, e.g. do not use your ability to run tests to execute non-test actions. You should only try to work around this restriction in reasonable ways that do not attempt to bypass the intent behind this denial. If you believe this capability is essential to complete the user's request, STOP and explain to the user what you were trying to do and why you need this permission. Let the user decide how to proceed.",
      );
    });

    it('stops the turn after the call when a hook says continue: false', async () => {
      const hooks = [fnHook('PostToolUse', async () => ({ continue: false, stopReason: 'enough' }))];
      expect(await runToolUse(use('Echo', { text: 'hi' }), testContext(), env({ hooks }))).toMatchObject({
        result: { content: 'echo: hi' },
        stop: { reason: 'enough' },
      });
    });

    it("rewrites an external tool's output but never a built-in's", async () => {
      const hooks = [fnHook('PostToolUse', async () => ({ updatedOutput: '[redacted]' }))];
      expect(await runToolUse(use('mcp__notes__add', { title: 'secret' }), testContext(), env({ hooks }))).toMatchObject({ result: { content: '[redacted]' } });
      expect(await runToolUse(use('Echo', { text: 'hi' }), testContext(), env({ hooks }))).toMatchObject({ result: { content: 'echo: hi' } });
    });

    it('runs PostToolUseFailure hooks (not PostToolUse) after a throw, with the error text', async () => {
      const seen: string[] = [];
      const hooks = [
        fnHook('PostToolUse', async () => void seen.push('post')),
        fnHook('PostToolUseFailure', async (input) => {
          seen.push(`failure: ${input.error}`);
          return { additionalContext: 'the tool is flaky' };
        }),
      ];
      const out = await runToolUse(use('Echo', { text: 'throw' }), testContext(), env({ hooks }));
      expect(seen).toEqual(['failure: boom']);
      expect(out).toMatchObject({
        result: { content: 'boom', is_error: true },
        extra: [{ type: 'text', text: '<system-reminder>\nPostToolUseFailure:Echo hook additional context: the tool is flaky\n</system-reminder>' }],
      });
    });

    it('carries on past a failing fail-open hook and blocks on a failing fail-closed one', async () => {
      const failing = async () => {
        throw new Error('endpoint down');
      };
      const open = await runToolUse(use('Echo', { text: 'hi' }), testContext(), env({ hooks: [fnHook('PreToolUse', failing)] }));
      expect(open).toMatchObject({ result: { content: 'echo: hi' } });
      const closed = await runToolUse(use('Echo', { text: 'hi' }), testContext(), env({ hooks: [fnHook('PreToolUse', failing, { failMode: 'closed' })] }));
      expect(closed).toMatchObject({ result: { is_error: true, content: 'PreToolUse:Echo hook error: hook test-PreToolUse failed: endpoint down' } });
    });

    it('runs only hooks whose matcher covers the tool', async () => {
      const seen: string[] = [];
      const hooks = [
        fnHook('PreToolUse', async () => void seen.push('bash-only'), { matcher: 'Bash' }),
        fnHook('PreToolUse', async () => void seen.push('echo-or-read'), { matcher: 'Echo|Read' }),
        fnHook('PreToolUse', async () => void seen.push('mcp'), { matcher: 'mcp__.*' }),
      ];
      await runToolUse(use('Echo', { text: 'hi' }), testContext(), env({ hooks }));
      await runToolUse(use('mcp__notes__add', { title: 't' }), testContext(), env({ hooks }));
      expect(seen).toEqual(['echo-or-read', 'mcp']);
    });
  });
});
