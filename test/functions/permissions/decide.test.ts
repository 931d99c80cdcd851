import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { decidePermission } from '../../../functions/permissions/decide.ts';
import { recordDenial, denialSummary } from '../../../functions/permissions/denial-tracking.ts';
import { rulesFromLists } from '../../../functions/permissions/rule-syntax.ts';
import type { PermissionContext, PermissionMode, RuleLists } from '../../../functions/permissions/types.ts';
import { createToolRegistry } from '../../../functions/tools/registry.ts';
import { buildTool, type Tool } from '../../../functions/tools/tool.ts';
import { testContext } from '../../support/fake-tools.ts';

const bash = buildTool({
  name: 'Bash',
  inputSchema: z.strictObject({ command: z.string() }),
  description: 'bash',
  isReadOnly: (input) => input.command.startsWith('ls'),
  call: async () => ({ data: '' }),
  mapToolResultToToolResultBlockParam: (_d, id) => ({ type: 'tool_result', tool_use_id: id, content: '' }),
});
const edit = buildTool({ ...bash, name: 'Edit', editsFiles: true, isReadOnly: () => false });
const picky = buildTool({
  ...bash,
  name: 'Picky',
  checkPermissions: async (input) => (input.command === 'no' ? { behavior: 'deny', message: 'Picky says no.' } : { behavior: 'passthrough' }),
});

function ctx(mode: PermissionMode, lists: RuleLists = {}, unattended = false): PermissionContext {
  return { mode, rules: rulesFromLists(lists, 'session').rules, unattended };
}
const decide = (tool: Tool, command: string, permissions: PermissionContext) =>
  decidePermission(tool, { command }, { ...testContext(), toolUseId: 't' }, permissions);

describe('decidePermission', () => {
  it('lets deny rules win over allow rules and over bypassPermissions', async () => {
    const permissions = ctx('bypassPermissions', { allow: ['Bash'], deny: ['Bash(rm:*)'] });
    expect(await decide(bash, 'rm -rf x', permissions)).toMatchObject({
      behavior: 'deny',
      message: 'Permission to use Bash with command rm -rf x has been denied.',
    });
    expect(await decide(bash, 'echo hi', permissions)).toMatchObject({ behavior: 'allow' });
  });

  it('asks on an ask rule even when an allow rule matches too', async () => {
    const decision = await decide(bash, 'git push', ctx('default', { allow: ['Bash'], ask: ['Bash(git push:*)'] }));
    expect(decision).toMatchObject({
      behavior: 'ask',
      message: "Permission rule 'Bash(git push:*)' from session settings requires approval for this Bash command",
    });
  });

  it("takes the tool's own checkPermissions verdict", async () => {
    expect(await decide(picky, 'no', ctx('bypassPermissions'))).toMatchObject({ behavior: 'deny', message: 'Picky says no.' });
    expect(await decide(picky, 'yes', ctx('bypassPermissions'))).toMatchObject({ behavior: 'allow' });
  });

  it('default: read-only calls run, others ask, allow rules let them through', async () => {
    expect(await decide(bash, 'ls', ctx('default'))).toMatchObject({ behavior: 'allow' });
    expect(await decide(bash, 'touch a', ctx('default'))).toEqual({
      behavior: 'ask',
      message: "Claude requested permissions to use Bash, but you haven't granted it yet.",
      reason: { type: 'mode', mode: 'default' },
    });
    expect(await decide(bash, 'touch a', ctx('default', { allow: ['Bash(touch:*)'] }))).toMatchObject({ behavior: 'allow', reason: { type: 'rule' } });
  });

  it('acceptEdits: edit tools run, other writes still ask', async () => {
    expect(await decide(edit, 'x', ctx('acceptEdits'))).toMatchObject({ behavior: 'allow' });
    expect(await decide(bash, 'touch a', ctx('acceptEdits'))).toMatchObject({ behavior: 'ask' });
  });

  it('acceptEdits asks the tool whether it only edits files, never its name', async () => {
    // A tool's name does not make it an editor (Stratus has no MultiEdit; an agent-defined tool could take the name).
    const namedLikeAnEditor = buildTool({ ...bash, name: 'MultiEdit', isReadOnly: () => false });
    expect(await decide(namedLikeAnEditor, 'x', ctx('acceptEdits'))).toMatchObject({ behavior: 'ask' });
    const declaredEditor = buildTool({ ...bash, name: 'Patch', editsFiles: true, isReadOnly: () => false });
    expect(await decide(declaredEditor, 'x', ctx('acceptEdits'))).toMatchObject({ behavior: 'allow', reason: { type: 'mode', mode: 'acceptEdits' } });
    // The built-in tools that declare it: the three that only write workspace files.
    expect(
      createToolRegistry()
        .tools.filter((t) => t.editsFiles)
        .map((t) => t.name)
        .sort(),
    ).toEqual(['Edit', 'NotebookEdit', 'Write']);
  });

  it('plan: only read-only calls run', async () => {
    expect(await decide(bash, 'ls', ctx('plan'))).toMatchObject({ behavior: 'allow' });
    const denied = await decide(edit, 'x', ctx('plan'));
    expect(denied.behavior).toBe('deny');
    expect(
      denied.behavior === 'deny' &&
        denied.message.startsWith('Permission to use Edit has been denied because the session is in plan mode, where only read-only tools run.'),
    ).toBe(true);
  });

  it('dontAsk and unattended sessions turn ask into deny', async () => {
    for (const permissions of [ctx('dontAsk'), ctx('default', {}, true)]) {
      const decision = await decide(bash, 'touch a', permissions);
      expect(decision.behavior).toBe('deny');
      expect(
        decision.behavior === 'deny' &&
          decision.message.startsWith("Permission to use Bash has been denied because Claude Code is running in don't ask mode. IMPORTANT:"),
      ).toBe(true);
    }
  });

  it('bypassPermissions lets everything through that no rule denies', async () => {
    expect(await decide(bash, 'touch a', ctx('bypassPermissions'))).toMatchObject({ behavior: 'allow', reason: { type: 'mode', mode: 'bypassPermissions' } });
  });
});

describe('denial tracking', () => {
  it('counts denials per tool and suggests a rule at 1, 3 and 5', () => {
    let counts = {};
    const suggestions: (string | undefined)[] = [];
    for (let i = 0; i < 5; i++) {
      const r = recordDenial(counts, 'Bash');
      counts = r.counts;
      suggestions.push(r.suggestion);
    }
    expect(suggestions).toEqual([
      'Bash was denied 1 time in this session; add an allow or deny rule for it?',
      undefined,
      'Bash was denied 3 times in this session; add an allow or deny rule for it?',
      undefined,
      'Bash was denied 5 times in this session; add an allow or deny rule for it?',
    ]);
    expect(denialSummary(counts)).toEqual([
      { tool: 'Bash', count: 5, suggestion: 'Bash was denied 5 times in this session; add an allow or deny rule for it?' },
    ]);
  });
});
