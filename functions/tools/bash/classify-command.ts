import type { ShellNode } from './shell-parser.ts';
import { loadShellParser, shellParserIfReady } from './shell-parser.ts';
import { READ_ONLY_COMMANDS } from './read-only-commands.ts';

/** Syntax that only groups or sequences commands; everything else must be explicitly allowed below. */
const STRUCTURAL = new Set(['program', 'list', 'pipeline', 'subshell', 'compound_statement', 'comment', '&&', '||', '|', ';', '(', ')', '{', '}', '\n']);
/** Argument shapes that cannot run anything. */
const ARGUMENT = new Set(['word', 'string', 'raw_string', 'string_content', 'number', 'concatenation', 'simple_expansion', 'expansion', 'variable_name', '"', '$', '${', '}', 'ansi_c_string', 'translated_string']);
const RUNS_CODE = ['command_substitution', 'process_substitution', 'arithmetic_expansion', 'variable_assignment', 'file_redirect'];
const SAFE_REDIRECT_TARGETS = new Set(['/dev/null']);

/**
 * Whether a shell command only reads: parsed with the real bash grammar, every command must be
 * allow-listed with allowed arguments, and nothing may write or run code on the side —
 * no redirection into files, no command or process substitution, no assignments, no `cd`
 * combined with git (a directory's own git config can run programs). Anything that fails to
 * parse, or that this does not understand, is not read-only.
 */
export function isReadOnlyCommand(command: string): boolean {
  const parser = shellParserIfReady();
  if (!parser) return false;
  const tree = parser.parse(command);
  if (!tree) return false;
  try {
    const root = tree.rootNode;
    if (root.hasError || command.trim() === '') return false;
    const names: string[] = [];
    if (!checkNode(root, names)) return false;
    if (names.includes('cd') && names.includes('git')) return false;
    return true;
  } finally {
    tree.delete();
  }
}

export async function classifyCommand(command: string): Promise<boolean> {
  await loadShellParser();
  return isReadOnlyCommand(command);
}

function checkNode(node: ShellNode, names: string[]): boolean {
  if (STRUCTURAL.has(node.type)) return node.children.every((c) => c !== null && checkNode(c, names));
  if (node.type === 'command') return checkCommand(node, names);
  // `[ ... ]` / `[[ ... ]]` only evaluate, unless something inside runs a command.
  if (node.type === 'test_command') return node.descendantsOfType(RUNS_CODE).length === 0;
  if (node.type === 'redirected_statement') {
    for (const child of node.children) {
      if (!child) return false;
      if (child.type === 'file_redirect') {
        if (!isSafeRedirect(child)) return false;
      } else if (child.type === 'heredoc_redirect') {
        if (!checkHeredoc(child)) return false;
      } else if (!checkNode(child, names)) return false;
    }
    return true;
  }
  return false;
}

function checkCommand(node: ShellNode, names: string[]): boolean {
  const words: string[] = [];
  for (const child of node.children) {
    if (!child) return false;
    if (child.type === 'command_name') {
      const inner = child.firstChild;
      if (!inner || inner.type !== 'word') return false;
      words.push(inner.text);
    } else if (ARGUMENT.has(child.type)) {
      if (!isPlainArgument(child)) return false;
      words.push(unquote(child));
    } else {
      return false;
    }
  }
  const [name, ...args] = words;
  if (!name) return false;
  const rule = READ_ONLY_COMMANDS[name];
  names.push(name);
  return rule !== undefined && rule(args);
}

/** No substitutions or arithmetic anywhere inside an argument. */
function isPlainArgument(node: ShellNode): boolean {
  if (!ARGUMENT.has(node.type)) return false;
  return node.children.every((c) => c !== null && isPlainArgument(c));
}

/** `2>&1`, `>&2`, `< file`, `> /dev/null`: reading input or discarding output. */
function isSafeRedirect(node: ShellNode): boolean {
  const op = node.children.find((c) => c && /^(<|>|>>|&>|&>>|>&|<&|>\||<>)$/.test(c.type));
  const target = node.childForFieldName('destination') ?? node.lastChild;
  if (!op || !target) return false;
  if (op.type === '<') return isPlainArgument(target);
  if (op.type === '>&' || op.type === '<&') return /^\d+$|^-$/.test(target.text);
  return SAFE_REDIRECT_TARGETS.has(target.text);
}

function checkHeredoc(node: ShellNode): boolean {
  // A heredoc body may hold substitutions unless its delimiter is quoted; only plain bodies pass.
  return !node.descendantsOfType(['command_substitution', 'process_substitution', 'expansion', 'simple_expansion', 'file_redirect']).length;
}

function unquote(node: ShellNode): string {
  const text = node.text;
  if (node.type === 'raw_string') return text.slice(1, -1);
  if (node.type === 'string') return text.slice(1, -1);
  return text.replace(/\\(.)/g, '$1');
}
