import type { PermissionRule, RuleBehavior } from './types.ts';

/**
 * Whether a rule covers this call. A rule without content covers the whole tool; `mcp__server`
 * and `mcp__server__*` cover every tool of that server. A rule with content looks at the
 * call's main argument: Bash's command (`git commit:*` is a prefix rule: the command itself or
 * the command followed by a space and anything), WebFetch's `domain:HOST`, or a file path,
 * pattern or URL (exact, or a prefix when the content ends in `*`; a skill's name for Skill). A tool that splits its command into parts (the Bash tool)
 * has its content rules matched part by part instead (./call-rules.ts); this string match is for
 * the whole-tool rules and for tools that do not split.
 */
export function ruleMatches(rule: PermissionRule, toolName: string, input: unknown): boolean {
  const { toolName: ruleTool, content } = rule.value;
  if (content === undefined) return toolNameMatches(ruleTool, toolName);
  if (ruleTool !== toolName) return false;
  const subject = mainArgument(toolName, input);
  if (subject === undefined) return false;
  if (toolName === 'Bash') return bashCommandMatches(content, subject);
  if (toolName === 'Skill') return skillNameMatches(content, subject);
  if (content.endsWith('*')) return subject.startsWith(content.slice(0, -1));
  return subject === content;
}

function toolNameMatches(ruleTool: string, toolName: string): boolean {
  if (ruleTool === toolName) return true;
  if (!ruleTool.startsWith('mcp__')) return false;
  const server = ruleTool.endsWith('__*') ? ruleTool.slice(0, -3) : ruleTool;
  // `mcp__server` alone (two segments) or with the wildcard covers the server's tools.
  if (server.split('__').length !== 2) return false;
  return toolName.startsWith(`${server}__`);
}

function bashCommandMatches(content: string, command: string): boolean {
  const cmd = command.trim();
  if (content.endsWith(':*')) {
    const prefix = content.slice(0, -2);
    return cmd === prefix || cmd.startsWith(`${prefix} `);
  }
  return cmd === content;
}

/** `Skill(name)` names one skill, `Skill(prefix:*)` every skill whose name starts with the prefix (a leading `/` is ignored on both sides). */
function skillNameMatches(content: string, skill: string): boolean {
  const name = skill.trim().replace(/^\//, '');
  const rule = content.replace(/^\//, '');
  return rule.endsWith(':*') ? name.startsWith(rule.slice(0, -2)) : name === rule;
}

function mainArgument(toolName: string, input: unknown): string | undefined {
  if (!input || typeof input !== 'object') return undefined;
  const record = input as Record<string, unknown>;
  // WebFetch's rules name the host it may fetch from: `WebFetch(domain:docs.example.com)`.
  if (toolName === 'WebFetch') return typeof record.url === 'string' && URL.canParse(record.url) ? `domain:${new URL(record.url).hostname}` : undefined;
  const value =
    toolName === 'Bash'
      ? record.command
      : toolName === 'Skill'
        ? record.skill
        : (record.file_path ?? record.notebook_path ?? record.path ?? record.pattern ?? record.url);
  return typeof value === 'string' ? value : undefined;
}

export function firstMatching(rules: readonly PermissionRule[], behavior: RuleBehavior, toolName: string, input: unknown): PermissionRule | undefined {
  return rules.find((rule) => rule.behavior === behavior && ruleMatches(rule, toolName, input));
}

/** A deny rule that removes the whole tool (no content): such tools are never shown to the model. */
export function isToolWhollyDenied(rules: readonly PermissionRule[], toolName: string): boolean {
  return rules.some((rule) => rule.behavior === 'deny' && rule.value.content === undefined && toolNameMatches(rule.value.toolName, toolName));
}
