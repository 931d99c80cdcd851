import type { ShellNode } from './shell-parser.ts';

/**
 * A word's value once the shell has removed its quotes and backslashes, when that value is
 * fixed before the command runs; undefined when it holds an expansion or substitution (`$X`,
 * `$(…)`, `$'…'`), whose value only the running shell knows.
 */
export function staticValue(node: ShellNode): string | undefined {
  switch (node.type) {
    case 'word':
    case 'number':
      return node.text.replace(/\\\n/g, '').replace(/\\(.)/g, '$1');
    case 'raw_string':
      return node.text.slice(1, -1);
    case 'string':
      if (node.namedChildren.some((c) => c?.type !== 'string_content')) return undefined;
      return node.text
        .slice(1, -1)
        .replace(/\\\n/g, '')
        .replace(/\\([$`"\\])/g, '$1');
    case 'concatenation': {
      const pieces = node.namedChildren.map((c) => (c ? staticValue(c) : undefined));
      return pieces.every((p) => p !== undefined) ? pieces.join('') : undefined;
    }
    default:
      return undefined;
  }
}

/** Syntax a top-level pipe can sit in: anything else (subshells, groups, substitutions) nests it. */
const TOP_LEVEL = new Set(['program', 'list', 'pipeline', 'redirected_statement', 'negated_command']);

/**
 * The text a deny message names for a part starting at an index: the whole command, or, when the
 * command has pipes outside any nesting, the stretch between the pipes that holds the part
 * (`echo x && rm a | cat` → `echo x && rm a`; docs/security.md, "Bash rules").
 */
export function pipeSegments(command: string, root: ShellNode): (index: number) => string {
  const cuts: { start: number; end: number }[] = [];
  const visit = (node: ShellNode) => {
    if (!TOP_LEVEL.has(node.type)) return;
    for (const child of node.children) {
      if (!child) continue;
      if (node.type === 'pipeline' && (child.type === '|' || child.type === '|&')) cuts.push({ start: child.startIndex, end: child.endIndex });
      else visit(child);
    }
  };
  visit(root);
  if (cuts.length === 0) return () => command;
  cuts.sort((a, b) => a.start - b.start);
  return (index) => {
    let from = 0;
    for (const cut of cuts) {
      if (index < cut.start) return command.slice(from, cut.start).trim();
      from = cut.end;
    }
    return command.slice(from).trim();
  };
}
