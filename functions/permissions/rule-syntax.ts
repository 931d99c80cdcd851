import type { PermissionRule, RuleBehavior, RuleLists, RuleSource, RuleValue } from './types.ts';

/**
 * Parses a rule string: `Bash`, `Bash(git commit:*)`, `Read(/workspace/secrets.txt)`,
 * `mcp__github`, `mcp__github__*`. Parentheses inside the content are kept as written; only the
 * outermost pair delimits it. Returns undefined for strings that are not rules.
 */
export function parseRuleValue(text: string): RuleValue | undefined {
  const trimmed = text.trim();
  const open = trimmed.indexOf('(');
  if (open === -1) return /^[A-Za-z0-9_*-]+$/.test(trimmed) ? { toolName: trimmed } : undefined;
  if (!trimmed.endsWith(')') || open === 0) return undefined;
  const toolName = trimmed.slice(0, open);
  if (!/^[A-Za-z0-9_-]+$/.test(toolName)) return undefined;
  const content = trimmed.slice(open + 1, -1);
  // `Bash()` and `Bash(*)` mean the whole tool.
  return content === '' || content === '*' ? { toolName } : { toolName, content };
}

export function formatRuleValue(value: RuleValue): string {
  return value.content === undefined ? value.toolName : `${value.toolName}(${value.content})`;
}

/** Turns `{ allow, deny, ask }` lists into rules; a malformed rule is reported, never ignored silently. */
export function rulesFromLists(lists: RuleLists | undefined, source: RuleSource): { rules: PermissionRule[]; invalid: string[] } {
  const rules: PermissionRule[] = [];
  const invalid: string[] = [];
  for (const behavior of ['deny', 'ask', 'allow'] as RuleBehavior[]) {
    for (const text of lists?.[behavior] ?? []) {
      const value = parseRuleValue(text);
      if (value) rules.push({ source, behavior, value });
      else invalid.push(text);
    }
  }
  return { rules, invalid };
}
