import type { CommandPart, CommandParts, PermissionRule } from './types.ts';

/** How a shell command's parts fare against the content rules of its tool. */
export interface CommandRuleMatch {
  /** The first part a deny rule matches, with that rule. */
  deny?: { rule: PermissionRule; part: CommandPart };
  /** The first part an ask rule matches, with that rule. */
  ask?: { rule: PermissionRule; part: CommandPart };
  /**
   * Deny or ask rules exist but could not be checked: the command did not parse, or a part runs
   * something that cannot be known before it runs. Such a command is asked about, never allowed.
   */
  unsure?: { why: 'unparsable' | 'unknown'; parts: CommandPart[] };
  /** Set when allow rules cover every part that is not read-only, and at least one part needed one. */
  allow?: PermissionRule;
  /** The parts no allow rule covers and that do not only read: what a person is asked about. */
  uncovered: CommandPart[];
}

/**
 * A deny rule that matches any part denies; an ask rule that matches any part asks; allow rules
 * must cover every part (read-only parts need none). A command that does not parse is matched as
 * a whole against deny and ask rules (a match still denies) and can only be allowed by a rule
 * that names it exactly. See docs/security.md, "Bash rules".
 */
export function matchCommandRules(command: string, split: CommandParts, rules: readonly PermissionRule[]): CommandRuleMatch {
  const contentRules = rules.filter((r) => r.value.content !== undefined);
  const exactAllow = contentRules.find((r) => r.behavior === 'allow' && !isPrefixRule(r.value.content!) && r.value.content === command.trim());
  if (!split.parsed) return matchUnparsed(command, contentRules, exactAllow);
  const { parts } = split;
  const deny = firstPartMatch(parts, contentRules, 'deny');
  const ask = firstPartMatch(parts, contentRules, 'ask');
  const guarded = contentRules.some((r) => r.behavior !== 'allow');
  const unknown = parts.filter((p) => p.unknown);
  const unsure = guarded && unknown.length > 0 ? { why: 'unknown' as const, parts: unknown } : undefined;
  if (exactAllow) return { deny, ask, unsure, allow: exactAllow, uncovered: [] };
  const uncovered: CommandPart[] = [];
  let allow: PermissionRule | undefined;
  for (const part of parts) {
    if (part.denyOnly || part.readOnly) continue;
    const rule =
      part.allowForm === undefined ? undefined : contentRules.find((r) => r.behavior === 'allow' && contentMatches(r.value.content!, part.allowForm!));
    if (rule) allow ??= rule;
    else uncovered.push(part);
  }
  return { deny, ask, unsure, allow: uncovered.length === 0 ? allow : undefined, uncovered };
}

function matchUnparsed(command: string, rules: readonly PermissionRule[], exactAllow: PermissionRule | undefined): CommandRuleMatch {
  const whole: CommandPart = { text: command, segment: command, matchForms: [command.trim()], readOnly: false };
  const deny = firstPartMatch([whole], rules, 'deny');
  const ask = firstPartMatch([whole], rules, 'ask');
  const unsure = rules.some((r) => r.behavior !== 'allow') ? { why: 'unparsable' as const, parts: [whole] } : undefined;
  return { deny, ask, unsure, allow: exactAllow, uncovered: exactAllow ? [] : [whole] };
}

function firstPartMatch(parts: readonly CommandPart[], rules: readonly PermissionRule[], behavior: 'deny' | 'ask') {
  for (const rule of rules) {
    if (rule.behavior !== behavior) continue;
    const part = parts.find((p) => p.matchForms.some((form) => contentMatches(rule.value.content!, form)));
    if (part) return { rule, part };
  }
  return undefined;
}

function isPrefixRule(content: string): boolean {
  return content.endsWith(':*');
}

/** `git commit:*` is a prefix rule (the words themselves, or followed by a space and more); anything else names one command exactly. */
export function contentMatches(content: string, command: string): boolean {
  const cmd = command.trim();
  if (isPrefixRule(content)) {
    const prefix = content.slice(0, -2).trim();
    return cmd === prefix || cmd.startsWith(`${prefix} `);
  }
  return cmd === content.trim();
}
