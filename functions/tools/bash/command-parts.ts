import type { CommandPart, CommandParts } from '../../permissions/types.ts';
import { isReadOnlyCommand } from './classify-command.ts';
import { isOutsideWorkspace } from './read-only-commands.ts';
import { baseName, findExecCommands, innerCommandLine, wrappedCommandStart } from './command-wrappers.ts';
import type { ShellNode } from './shell-parser.ts';
import { loadShellParser, shellParserIfReady } from './shell-parser.ts';
import { pipeSegments, staticValue } from './shell-words.ts';

/**
 * Assignments that only tune a tool's output or locale, and that an allow rule may look past
 * (`NODE_ENV=test npm test` is covered by `Bash(npm test:*)`). Any other assignment (`PATH=`,
 * `LD_PRELOAD=`, `GIT_SSH_COMMAND=` …) can change what runs, so the rule must name it.
 */
const SAFE_ASSIGNMENTS: ReadonlySet<string> = new Set([
  'NODE_ENV',
  'RUST_BACKTRACE',
  'RUST_LOG',
  'PYTHONUNBUFFERED',
  'PYTHONDONTWRITEBYTECODE',
  'GOOS',
  'GOARCH',
  'CGO_ENABLED',
  'GO111MODULE',
  'LANG',
  'LANGUAGE',
  'LC_ALL',
  'LC_CTYPE',
  'LC_TIME',
  'TZ',
  'TERM',
  'COLORTERM',
  'NO_COLOR',
  'FORCE_COLOR',
]);

/** Constructs that decide what runs, or define names that shadow commands: no allow rule covers them. */
const NEEDS_APPROVAL = new Set(['function_definition', 'if_statement', 'for_statement', 'c_style_for_statement', 'while_statement', 'case_statement']);
/** Statements that set or unset shell state for the commands after them. */
const STATE_CHANGES = new Set(['variable_assignment', 'declaration_command', 'unset_command']);
const SUBSTITUTIONS = new Set(['command_substitution', 'process_substitution']);
/** Output redirections that write nowhere: /dev/null, or (after `>&`) duplicating or closing a descriptor. */
const DISCARDED = /^\/dev\/null$/;
const DESCRIPTOR = /^(\d+|-)$/;
/** How deep `bash -c '…'` and `eval` are followed. */
const MAX_NESTING = 3;

/** The Bash tool's commandParts: waits for the grammar, then splits. */
export async function bashCommandParts(command: string): Promise<CommandParts> {
  await loadShellParser();
  return splitCommand(command);
}

/**
 * Splits a command line into the simple commands it runs (across `&&`, `||`, `;`, `|`, `&`,
 * newlines, subshells, groups, control flow, command and process substitution and heredocs),
 * plus the parts that need approval on their own: output redirection into a file, assignments,
 * function definitions and control flow. Needs the grammar loaded (bashCommandParts).
 */
export function splitCommand(command: string, nesting = 0): CommandParts {
  const parser = shellParserOrThrow();
  const tree = parser.parse(command);
  if (!tree) return { parsed: false, reason: 'the shell grammar returned nothing' };
  try {
    if (tree.rootNode.hasError) return { parsed: false, reason: 'the command is not valid shell syntax' };
    const segments = pipeSegments(command, tree.rootNode);
    const parts: NamedPart[] = [];
    collect(tree.rootNode, { parts, segmentOf: segments, nesting });
    guardCdWithGit(parts);
    guardCdOutOfWorkspace(parts);
    const statements = parts.filter((p) => !p.denyOnly && !p.redirect).length;
    return { parsed: true, parts: parts.map(({ name: _name, args: _args, redirect: _redirect, ...part }) => part), compound: statements > 1 };
  } finally {
    tree.delete();
  }
}

interface Walk {
  parts: NamedPart[];
  segmentOf: (index: number) => string;
  nesting: number;
}

/** A part while the split is built: its program's name and static arguments, for the guards below. */
type NamedPart = CommandPart & { name?: string; args?: (string | undefined)[]; redirect?: boolean };

function collect(node: ShellNode, walk: Walk): void {
  if (node.type === 'command') commandPart(node, walk);
  else if (node.type === 'file_redirect') redirectPart(node, walk);
  else if (STATE_CHANGES.has(node.type) && node.parent?.type !== 'command' && node.parent?.type !== 'declaration_command') statePart(node, walk);
  else if (NEEDS_APPROVAL.has(node.type)) walk.parts.push(pseudoPart(node, walk));
  for (const child of node.namedChildren) if (child) collect(child, walk);
}

/** One simple command: its forms for deny and ask rules, the form an allow rule must cover, and what it runs inside. */
function commandPart(node: ShellNode, walk: Walk): void {
  const assignments: ShellNode[] = [];
  const words: ShellNode[] = [];
  for (const child of node.namedChildren) {
    if (!child || child.type.endsWith('_redirect') || child.type === 'comment') continue;
    if (child.type === 'variable_assignment') assignments.push(child);
    else words.push(child.type === 'command_name' ? (child.firstNamedChild ?? child) : child);
  }
  const raw = words.map((w) => w.text);
  const values = words.map(staticValue);
  // The shell, not the word, decides what a glob or brace list in the program's name runs (`/bin/r?`).
  if (words[0] && hasUnquotedPattern(words[0])) values[0] = undefined;
  const segment = walk.segmentOf(node.startIndex);
  const levels = wrapperLevels(values, raw);
  const nested = innerCommands(levels.levels, walk, segment);
  walk.parts.push({
    text: node.text,
    segment,
    matchForms: [...new Set([node.text.trim(), raw.join(' '), ...levels.levels.flatMap(formsOf)])],
    allowForm: allowFormOf(node, assignments, raw, values),
    readOnly: isReadOnlyCommand(node.text) && !readsRedirectedInput(node),
    ...(levels.unknown || nested.unknown ? { unknown: true } : {}),
    name: values[0] === undefined ? undefined : baseName(values[0]),
    args: values.slice(1),
  });
  walk.parts.push(...nested.parts);
}

/** The words of one command, after some wrappers: unquoted values (undefined where only the running shell knows) and the text as written. */
interface Level {
  values: (string | undefined)[];
  raw: string[];
}

/**
 * The command, then what each wrapper in turn runs (`timeout 5 nice rm x` → `nice rm x` → `rm x`).
 * A wrapped program that is not a plain word (`sudo "$CMD" x`) makes the command unknown.
 */
function wrapperLevels(values: (string | undefined)[], raw: string[]): { levels: Level[]; unknown: boolean } {
  const levels: Level[] = [{ values, raw }];
  if (values[0] === undefined) return { levels, unknown: true };
  for (let depth = 0; depth < 8; depth++) {
    const level = levels.at(-1)!;
    const start = wrappedCommandStart(
      level.values.map((v, i) => v ?? level.raw[i]!),
      false,
    );
    if (start === undefined) return { levels, unknown: false };
    const next = { values: level.values.slice(start), raw: level.raw.slice(start) };
    levels.push(next);
    if (next.values[0] === undefined) return { levels, unknown: true };
  }
  return { levels, unknown: true };
}

/** A level as deny and ask rules see it: unquoted where it can be, without the program's folder, and the commands of `find -exec`. */
function formsOf(level: Level): string[] {
  const words = level.values.map((v, i) => v ?? level.raw[i]!);
  const forms = [words.join(' ')];
  if (words[0]!.includes('/')) forms.push([baseName(words[0]!), ...words.slice(1)].join(' '));
  for (const exec of findExecCommands(words)) forms.push(exec.join(' '), ...(exec[0]!.includes('/') ? [[baseName(exec[0]!), ...exec.slice(1)].join(' ')] : []));
  return forms;
}

/** What `bash -c '…'` or `eval …` runs, at any wrapper level, split in turn; its parts count for deny and ask rules only. */
function innerCommands(levels: Level[], walk: Walk, segment: string): { parts: NamedPart[]; unknown: boolean } {
  for (const level of levels) {
    const inner = innerCommandLine(level.values);
    if (!inner) continue;
    if (inner.dynamic || inner.line === undefined || walk.nesting >= MAX_NESTING) return { parts: [], unknown: true };
    const split = splitCommand(inner.line, walk.nesting + 1);
    if (!split.parsed) return { parts: [], unknown: true };
    return { parts: split.parts.map((p) => ({ ...p, segment, denyOnly: true })), unknown: false };
  }
  return { parts: [], unknown: false };
}

/**
 * `cmd < file` reads a file the classifier has not looked at: such a part is not read-only on its
 * own. The grammar hangs a redirection after a list on the whole list (`a && cat < f`), so every
 * enclosing redirected statement counts.
 */
function readsRedirectedInput(node: ShellNode): boolean {
  for (let at: ShellNode | null = node; at; at = at.parent) {
    const redirects = at.type === 'command' || at.type === 'redirected_statement' ? at.namedChildren : [];
    if (redirects.some((r) => r?.type === 'file_redirect' && r.children.some((c) => c?.type === '<' || c?.type === '<>'))) return true;
  }
  return false;
}

/**
 * The words an allow rule must cover: safe assignments and safe wrappers removed, the rest as
 * written with single spaces. None when the command's name or arguments hold a command or process
 * substitution (what it runs depends on another command), or its name is not a plain word.
 */
function allowFormOf(node: ShellNode, assignments: ShellNode[], raw: string[], values: (string | undefined)[]): string | undefined {
  if (values[0] === undefined || hasSubstitution(node)) return undefined;
  const kept = assignments.filter((a) => !isSafeAssignment(a)).map((a) => a.text);
  let start = 0;
  for (let depth = 0; depth < 8; depth++) {
    if (values.slice(start).some((v) => v === undefined)) break;
    const next = wrappedCommandStart(values.slice(start) as string[], true);
    if (next === undefined) break;
    start += next;
  }
  return [...kept, ...raw.slice(start)].join(' ');
}

/** An unquoted glob character or brace list, which the shell expands into other words. */
function hasUnquotedPattern(node: ShellNode): boolean {
  const unquoted = unquotedText(node).replace(/\\./g, '');
  return /[*?[]/.test(unquoted) || /\{[^}]*(,|\.\.)[^}]*\}/.test(unquoted);
}

/** The word with its quoted pieces blanked out: what the shell would still expand. */
function unquotedText(node: ShellNode): string {
  if (node.type === 'word') return node.text;
  if (node.type === 'concatenation') return node.namedChildren.map((c) => (c ? unquotedText(c) : '')).join('');
  return '_';
}

function isSafeAssignment(node: ShellNode): boolean {
  const name = node.childForFieldName('name')?.text ?? '';
  const value = node.childForFieldName('value');
  return SAFE_ASSIGNMENTS.has(name) && (value === null || staticValue(value) !== undefined);
}

function hasSubstitution(node: ShellNode): boolean {
  if (SUBSTITUTIONS.has(node.type)) return true;
  return node.namedChildren.some((c) => c !== null && hasSubstitution(c));
}

/** `> file`, `>> file`, `&> file`: a write of its own, which no allow rule for the command covers. */
function redirectPart(node: ShellNode, walk: Walk): void {
  const op = node.children.find((c) => c && /^(>|>>|&>|&>>|>&|>\||<>)$/.test(c.type));
  const target = node.childForFieldName('destination');
  if (!op || (target && (DISCARDED.test(target.text) || (op.type === '>&' && DESCRIPTOR.test(target.text))))) return;
  walk.parts.push({ ...pseudoPart(node, walk), redirect: true });
}

/** `X=1`, `export X=1`, `unset X` on their own: they change what later commands see, so they need an allow of their own. */
function statePart(node: ShellNode, walk: Walk): void {
  const text = node.text;
  walk.parts.push({
    text,
    segment: walk.segmentOf(node.startIndex),
    matchForms: [text.trim()],
    allowForm: hasSubstitution(node) ? undefined : text.trim(),
    readOnly: false,
  });
}

function pseudoPart(node: ShellNode, walk: Walk): NamedPart {
  return { text: node.text, segment: walk.segmentOf(node.startIndex), matchForms: [node.text.trim()], readOnly: false };
}

/** A directory's own git config can run programs: after a `cd`, git is not read-only (as the classifier says). */
function guardCdWithGit(parts: NamedPart[]): void {
  if (!parts.some((p) => p.name === 'cd')) return;
  for (const part of parts) if (part.name === 'git') part.readOnly = false;
}

/**
 * A `cd` that may leave the workspace (an absolute path outside it, `~`, `-`, `..`, or none: home)
 * needs approval: the parts after it would run somewhere their rules never
 * meant. Inside the workspace it only moves.
 */
function guardCdOutOfWorkspace(parts: NamedPart[]): void {
  for (const part of parts) {
    if (part.name !== 'cd') continue;
    const args = part.args ?? [];
    const target = args[0];
    if (args.length !== 1 || target === undefined || target === '-' || isOutsideWorkspace(target) || target.split('/').includes('..')) part.readOnly = false;
  }
}

function shellParserOrThrow() {
  const parser = shellParserIfReady();
  if (!parser) throw new Error('The shell grammar is not loaded yet: call bashCommandParts, which waits for it.');
  return parser;
}
