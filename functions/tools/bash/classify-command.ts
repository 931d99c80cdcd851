import type { ShellNode } from './shell-parser.ts';
import { shellParserIfReady } from './shell-parser.ts';
import { FILE_READING_COMMANDS, isOutsideWorkspace, READ_ONLY_COMMANDS } from './read-only-commands.ts';

/** Syntax that only groups or sequences commands; everything else must be explicitly allowed below. */
const STRUCTURAL = new Set(['program', 'list', 'pipeline', '&&', '||', '|', ';']);
/** Argument shapes that cannot run anything. */
const ARGUMENT = new Set(['word', 'string', 'raw_string', 'string_content', 'number', 'concatenation', '"']);
/** Unquoted glob characters: the shell, not the command, decides which files they name. */
const UNQUOTED_GLOB = /[*?[\]]/;
const SAFE_REDIRECT_TARGETS = new Set(['/dev/null']);
/**
 * echo's unquoted words may not hold `!` (history-expansion syntax: `!!`, `!$`, `!foo`); other
 * commands' rules do not look at it (their arguments are only read).
 */
const ECHO_UNQUOTED_BANG = /!/;
/**
 * Commands whose quoted arguments may hold `$`, a backquote or a brace list as plain text (the
 * reference's rules for echo, jq and cd allow it). For every other command such an argument is
 * not read-only: nobody can tell from the text what the word becomes (`{a,b}`, `{1..3}` turn one word
 * into several the checks never saw).
 */
const LITERAL_DOLLAR_OK = new Set(['echo', 'jq', 'cd']);

/**
 * Whether a shell command only reads: parsed with the real bash grammar, every command must be
 * allow-listed with allowed arguments, and nothing may write, run code or hide structure on the
 * side — no redirection into files (or from them), no command, process or parameter substitution,
 * no unquoted globs, no assignments, subshells, tests, comments or newlines, no `cd` combined with
 * git (a directory's own git config can run programs). Anything that fails to parse, or that this
 * does not understand, is not read-only. The decisions are checked case by case (docs/tools.md,
 * "Read-only classification of Bash commands").
 */
export function isReadOnlyCommand(command: string): boolean {
  const parser = shellParserIfReady();
  // Callers may ask before the input was validated.
  if (!parser || typeof command !== 'string') return false;
  const tree = parser.parse(command);
  if (!tree) return false;
  try {
    const root = tree.rootNode;
    // Nothing to run: let it through without asking.
    if (command.trim() === '') return true;
    // Newlines could hide a second command from a reader: ask about them.
    if (root.hasError || command.includes('\n')) return false;
    const names: string[] = [];
    if (!checkNode(root, names)) return false;
    if (names.includes('cd') && names.includes('git')) return false;
    return true;
  } finally {
    tree.delete();
  }
}

function checkNode(node: ShellNode, names: string[]): boolean {
  if (STRUCTURAL.has(node.type)) return node.children.every((c) => c !== null && checkNode(c, names));
  if (node.type === 'command') return checkCommand(node, names);
  if (node.type === 'redirected_statement') {
    for (const child of node.children) {
      if (!child) return false;
      if (child.type === 'file_redirect') {
        if (!isSafeRedirect(child)) return false;
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
      if (inner?.type !== 'word') return false;
      words.push(inner.text);
    } else if (ARGUMENT.has(child.type)) {
      if (!isPlainArgument(child)) return false;
      if (child.type === 'word' && UNQUOTED_GLOB.test(child.text)) return false;
      if (words[0] === 'echo' && hasUnquotedWord(child, (text) => ECHO_UNQUOTED_BANG.test(text))) return false;
      words.push(unquote(child));
    } else {
      return false;
    }
  }
  const [name, ...args] = words;
  if (!name) return false;
  if (!LITERAL_DOLLAR_OK.has(name) && args.some((a) => /[$`]/.test(a) || (a.includes('{') && /,|\.\./.test(a)))) return false;
  const rule = READ_ONLY_COMMANDS[name];
  names.push(name);
  if (FILE_READING_COMMANDS.has(name) && args.some((a) => !a.startsWith('-') && isOutsideWorkspace(a))) return false;
  return rule?.(args) ?? false;
}

/** Whether an unquoted part of the argument (the word itself, or a bare word inside a concatenation) matches. */
function hasUnquotedWord(node: ShellNode, test: (text: string) => boolean): boolean {
  if (node.type === 'word') return test(node.text);
  if (node.type !== 'concatenation') return false;
  return node.children.some((c) => c !== null && hasUnquotedWord(c, test));
}

/** No substitutions or arithmetic anywhere inside an argument. */
function isPlainArgument(node: ShellNode): boolean {
  if (!ARGUMENT.has(node.type)) return false;
  return node.children.every((c) => c !== null && isPlainArgument(c));
}

/**
 * `2>&1`, `>&2`, `> /dev/null`: moving or discarding output. Input redirection is not read-only
 * either: it is treated as a possible read of something sensitive.
 */
function isSafeRedirect(node: ShellNode): boolean {
  const op = node.children.find((c) => c && /^(<|>|>>|&>|&>>|>&|<&|>\||<>)$/.test(c.type));
  const target = node.childForFieldName('destination') ?? node.lastChild;
  if (!op || !target) return false;
  if (op.type === '>&') return /^\d+$/.test(target.text);
  if (op.type === '>' || op.type === '>>' || op.type === '&>') return SAFE_REDIRECT_TARGETS.has(target.text);
  return false;
}

function unquote(node: ShellNode): string {
  const text = node.text;
  if (node.type === 'raw_string') return text.slice(1, -1);
  if (node.type === 'string') return text.slice(1, -1);
  return text.replace(/\\(.)/g, '$1');
}
