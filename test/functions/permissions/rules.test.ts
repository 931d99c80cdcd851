import { describe, expect, it } from 'vitest';
import { formatRuleValue, parseRuleValue, rulesFromLists } from '../../../functions/permissions/rule-syntax.ts';
import { ruleMatches } from '../../../functions/permissions/rule-matching.ts';
import type { PermissionRule } from '../../../functions/permissions/types.ts';

const rule = (text: string): PermissionRule => ({ source: 'session', behavior: 'allow', value: parseRuleValue(text)! });

describe('rule syntax', () => {
  it('parses tools, contents, prefix rules and MCP server rules', () => {
    expect(parseRuleValue('Bash')).toEqual({ toolName: 'Bash' });
    expect(parseRuleValue('Bash(git commit:*)')).toEqual({ toolName: 'Bash', content: 'git commit:*' });
    expect(parseRuleValue('Bash(echo (a))')).toEqual({ toolName: 'Bash', content: 'echo (a)' });
    expect(parseRuleValue('Bash()')).toEqual({ toolName: 'Bash' });
    expect(parseRuleValue('mcp__github__*')).toEqual({ toolName: 'mcp__github__*' });
    expect(formatRuleValue({ toolName: 'Read', content: '/workspace/a' })).toBe('Read(/workspace/a)');
  });

  it('reports strings that are not rules', () => {
    expect(rulesFromLists({ allow: ['Bash(ls', 'Read'], deny: ['(x)', 'two words'] }, 'project')).toEqual({
      rules: [{ source: 'project', behavior: 'allow', value: { toolName: 'Read' } }],
      invalid: ['(x)', 'two words', 'Bash(ls'],
    });
  });
});

describe('rule matching', () => {
  it('matches a whole tool by name', () => {
    expect(ruleMatches(rule('Bash'), 'Bash', { command: 'anything' })).toBe(true);
    expect(ruleMatches(rule('Bash'), 'Read', {})).toBe(false);
  });

  it('matches Bash prefix rules on word boundaries', () => {
    const r = rule('Bash(git commit:*)');
    expect(ruleMatches(r, 'Bash', { command: 'git commit -m x' })).toBe(true);
    expect(ruleMatches(r, 'Bash', { command: 'git commit' })).toBe(true);
    expect(ruleMatches(r, 'Bash', { command: 'git commitx' })).toBe(false);
    expect(ruleMatches(r, 'Bash', { command: 'git push' })).toBe(false);
  });

  it('matches an exact Bash command only exactly', () => {
    expect(ruleMatches(rule('Bash(npm test)'), 'Bash', { command: 'npm test' })).toBe(true);
    expect(ruleMatches(rule('Bash(npm test)'), 'Bash', { command: 'npm test && rm -rf /' })).toBe(false);
  });

  it('matches every tool of an MCP server with mcp__server and mcp__server__*', () => {
    for (const text of ['mcp__github', 'mcp__github__*']) {
      expect(ruleMatches(rule(text), 'mcp__github__create_issue', {})).toBe(true);
      expect(ruleMatches(rule(text), 'mcp__githubx__create_issue', {})).toBe(false);
    }
    expect(ruleMatches(rule('mcp__github__create_issue'), 'mcp__github__create_issue', {})).toBe(true);
    expect(ruleMatches(rule('mcp__github__create_issue'), 'mcp__github__close_issue', {})).toBe(false);
  });

  it('matches file rules on the path, exactly or by prefix', () => {
    expect(ruleMatches(rule('Read(/workspace/.env)'), 'Read', { file_path: '/workspace/.env' })).toBe(true);
    expect(ruleMatches(rule('Read(/workspace/secrets/*)'), 'Read', { file_path: '/workspace/secrets/key' })).toBe(true);
    expect(ruleMatches(rule('Read(/workspace/secrets/*)'), 'Read', { file_path: '/workspace/src/a' })).toBe(false);
  });
});
