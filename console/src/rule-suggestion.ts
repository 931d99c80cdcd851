/**
 * A first draft of the permission rule to remember for a call, for the person to edit: a Bash
 * command by its program and subcommand as a prefix rule (`npm test -- --ci` → `Bash(npm test:*)`),
 * a path-taking tool by its folder as a prefix (`Edit(/workspace/src/*)`), anything else by its name
 * (the rules' matching is functions/permissions/rule-matching.ts).
 */
export function suggestRule(toolName: string, input: unknown): string {
  const i = (input ?? {}) as Record<string, unknown>;
  if (toolName === 'Bash' && typeof i.command === 'string') {
    const words = i.command.trim().split(/\s+/);
    const head = words[1] !== undefined && /^[\w.:@/-]+$/.test(words[1]) && !words[1].startsWith('-') ? words.slice(0, 2) : words.slice(0, 1);
    return `Bash(${head.join(' ')}:*)`;
  }
  if (typeof i.file_path === 'string' && i.file_path.includes('/')) return `${toolName}(${i.file_path.slice(0, i.file_path.lastIndexOf('/') + 1)}*)`;
  return toolName;
}
