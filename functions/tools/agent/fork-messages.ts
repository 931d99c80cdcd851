import type { ContentBlockParam, MessageParam } from '@anthropic-ai/sdk/resources/messages';
import type { ForkBase } from './subagent-types.ts';

/** The tag that marks a fork's directive; a conversation holding it is a fork's (recursion guard). */
export const FORK_BOILERPLATE_TAG = 'fork-boilerplate';
/** The placeholder result a fork sees for the parent's calls of the same response. */
export const FORK_PLACEHOLDER_RESULT = 'Fork started — processing in background';

/** The fork directive (docs/tool-pipeline.md, "Sub-agents"). */
export function forkDirective(prompt: string): string {
  return `<${FORK_BOILERPLATE_TAG}>
STOP. READ THIS FIRST.

You are a forked worker process. You are NOT the main agent.

RULES (non-negotiable):
1. Your system prompt says "default to forking." IGNORE IT — that's for the parent. You ARE the fork. Do NOT spawn sub-agents; execute directly.
2. Do NOT converse, ask questions, or suggest next steps
3. Do NOT editorialize or add meta-commentary
4. USE your tools directly: Bash, Read, Write, etc.
5. If you modify files, commit your changes before reporting. Include the commit hash in your report.
6. Do NOT emit text between tool calls. Use tools silently, then report once at the end.
7. Stay strictly within your directive's scope. If you discover related systems outside your scope, mention them in one sentence at most — other workers cover those areas.
8. Keep your report under 500 words unless the directive specifies otherwise. Be factual and concise.
9. Your response MUST begin with "Scope:". No preamble, no thinking-out-loud.
10. REPORT structured facts, then stop

Output format (plain text labels, not markdown headers):
  Scope: <echo back your assigned scope in one sentence>
  Result: <the answer or key findings, limited to the scope above>
  Key files: <relevant file paths — include for research tasks>
  Files changed: <list with commit hash — include only if you modified files>
  Issues: <list — include only if there are issues to flag>
</${FORK_BOILERPLATE_TAG}>

Your directive: ${prompt}`;
}

/**
 * The fork's own start after the parent's request: the parent's calls so far (an assistant
 * message), a placeholder result for each, and the directive. The messages before them are the
 * parent's as sent, so the first request shares the parent's cached prefix.
 */
export function forkStartMessages(base: ForkBase, prompt: string): MessageParam[] {
  const results: ContentBlockParam[] = base.toolUses.map((b) => ({
    type: 'tool_result',
    tool_use_id: b.id,
    content: [{ type: 'text', text: FORK_PLACEHOLDER_RESULT }],
  }));
  return [
    { role: 'assistant', content: base.toolUses.map((b) => ({ type: 'tool_use' as const, id: b.id, name: b.name, input: b.input })) },
    { role: 'user', content: [...results, { type: 'text', text: forkDirective(prompt) }] },
  ];
}
