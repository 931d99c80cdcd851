import { BASH_TOOL_NAME } from './bash-tool.ts';
import { suggestBashRule } from './bash/rule-suggestion.ts';

/**
 * A first draft of the permission rule to remember for an approved call, for the person to
 * edit: Bash by its command (./bash/rule-suggestion.ts), a path-taking tool by its folder as a
 * prefix (`Edit(/workspace/src/*)`), WebFetch by the URL's host (`WebFetch(domain:example.com)`),
 * anything else by its name.
 */
export async function suggestRule(toolName: string, input: unknown): Promise<string> {
  const i = (input ?? {}) as Record<string, unknown>;
  if (toolName === BASH_TOOL_NAME && typeof i.command === 'string') return suggestBashRule(i.command);
  if (toolName === 'WebFetch' && typeof i.url === 'string' && URL.canParse(i.url)) return `${toolName}(domain:${new URL(i.url).hostname})`;
  if (typeof i.file_path === 'string' && i.file_path.includes('/')) return `${toolName}(${i.file_path.slice(0, i.file_path.lastIndexOf('/') + 1)}*)`;
  return toolName;
}
