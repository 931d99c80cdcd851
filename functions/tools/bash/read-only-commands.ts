import { isInsideWorkspace } from '../../../sandbox-runner/workspace/virtual-paths.ts';

/**
 * Which commands may run without changing anything, and with which arguments. A command that
 * is not listed, or that uses an argument its rule rejects, is not read-only. Rules look at
 * the words after the command name (already unquoted).
 */
export type ArgsRule = (args: string[]) => boolean;

const any: ArgsRule = () => true;
const none: ArgsRule = (args) => args.length === 0;
const without = (...banned: (string | RegExp)[]): ArgsRule => (args) =>
  !args.some((a) => banned.some((b) => (typeof b === 'string' ? a === b || a.startsWith(`${b}=`) : b.test(a))));
const positionals = (args: string[]) => args.filter((a) => !a.startsWith('-'));

/**
 * Commands that open the files they are given: reading outside the workspace is not the quiet
 * kind of read (the reference asks before it too). Others (echo, basename, …) only print words.
 */
export const FILE_READING_COMMANDS = new Set([
  'cat', 'head', 'tail', 'wc', 'grep', 'egrep', 'fgrep', 'rg', 'ls', 'file', 'stat', 'tree', 'diff', 'cmp', 'comm', 'cut', 'tr', 'nl',
  'od', 'hexdump', 'strings', 'sort', 'uniq', 'jq', 'find', 'sed', 'du', 'column', 'fold', 'expand', 'rev', 'tac', 'paste', 'join',
  'md5sum', 'sha1sum', 'sha256sum', 'base64', 'look', 'cksum', 'fmt', 'pr', 'readlink', 'realpath',
]);

/**
 * An operand naming a place outside the workspace: an absolute path not under /workspace (after
 * `..` is resolved), or the home directory.
 */
export function isOutsideWorkspace(arg: string): boolean {
  if (arg.startsWith('~')) return true;
  if (!arg.startsWith('/')) return false;
  return !isInsideWorkspace(arg);
}

export const READ_ONLY_COMMANDS: Record<string, ArgsRule> = {
  cat: any, head: any, tail: without('-f', '-F', '--follow'), wc: any, ls: any, pwd: any, echo: any,
  grep: any, egrep: any, fgrep: any, rg: without('--pre', /^--pre=/, '--search-zip', '-z'), which: any, whoami: none, id: any,
  date: without('-s', '--set', /^-s/), uname: any, hostname: (args) => args.every((a) => a.startsWith('-')), df: any, du: any,
  file: without('-C', '--compile'), stat: any, basename: any, dirname: any, realpath: any, readlink: any, tree: without('-o', /^-o/),
  diff: without('--output', /^--output=/), cmp: any, comm: any, cut: any, tr: any, nl: any, od: any, hexdump: any, strings: any,
  sort: (args) => args.every((a) => !a.startsWith('-') || /^-[rnufhbVMsdgiz]+$/.test(a)),
  uniq: (args) => positionals(args).length <= 1,
  jq: without('--rawfile', '--slurpfile'), true: any, false: any, test: any, '[': any, printenv: any, seq: any, sleep: any,
  find: without('-exec', '-execdir', '-ok', '-okdir', '-delete', '-fprint', '-fprint0', '-fprintf', '-fls'),
  sed: (args) => sedIsReadOnly(args), cd: any, ps: any, type: any, column: any, fold: any, expand: any, rev: any,
  tac: any, paste: any, join: any, md5sum: without('-c'), sha1sum: any, sha256sum: any, base64: any, locale: none, nproc: any,
  free: any, uptime: any, groups: any, tty: none, arch: none, look: any, numfmt: any, cksum: any, fmt: any, pr: any,
  git: (args) => gitIsReadOnly(args),
};

/** sed only prints unless told to write: -i edits in place, the w/W commands and the e command write or run; substitutions count as edits. */
function sedIsReadOnly(args: string[]): boolean {
  if (args.some((a) => a === '-i' || a.startsWith('-i') || a.startsWith('--in-place') || a === '-s' || a === '--separate')) return false;
  const scripts: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '-e' || a === '--expression') scripts.push(args[++i] ?? '');
    else if (a === '-f' || a === '--file') return false;
    else if (!a.startsWith('-') && scripts.length === 0 && !args.includes('-e')) scripts.push(a);
  }
  return scripts.every(isPrintOnlySedScript);
}

/**
 * Only addresses and printing/deleting commands; anything else (s, w, W, e, r, R, and whatever is
 * not understood) could write a file or run a program.
 */
function isPrintOnlySedScript(script: string): boolean {
  const rest = script.replace(/\/(?:\\.|[^/])*\//g, ' ');
  return /^[\d\s,$;!{}pdnqPgGhHxlN=+~]*$/.test(rest);
}

const GIT_READ_ONLY: Record<string, ArgsRule> = {
  status: any, log: without('--output', /^--output=/), diff: without('--output', /^--output=/, '--ext-diff'),
  show: without('--output', /^--output=/), blame: any, grep: without('--open-files-in-pager', '-O', /^-O/),
  'rev-parse': any, 'ls-files': any, 'ls-tree': any, 'ls-remote': any, describe: any, shortlog: any, 'cat-file': any,
  'for-each-ref': any, 'merge-base': any, 'rev-list': any, 'name-rev': any, 'count-objects': any, 'check-ignore': any,
  whatchanged: any, 'show-ref': without('-d', '--delete'), 'verify-commit': any,
  branch: (args) => args.every((a) => ['-a', '-r', '-v', '-vv', '--all', '--remotes', '--list', '-l', '--show-current', '--merged', '--no-merged', '--contains'].includes(a) || (a.startsWith('--format=') || a.startsWith('--sort='))) ,
  tag: (args) => args.length === 0 || args.every((a) => ['-l', '--list', '-n'].includes(a) || a.startsWith('--sort=') || a.startsWith('--contains') || a.startsWith('--format=')),
  remote: (args) => args.length === 0 || (args.length === 1 && args[0] === '-v') || (args[0] === 'show' || args[0] === 'get-url'),
  config: (args) => args.some((a) => ['--get', '--get-all', '--list', '-l', '--get-regexp'].includes(a)) && !args.some((a) => ['--add', '--unset', '--unset-all', '--replace-all', '--edit', '-e', '--rename-section', '--remove-section'].includes(a)),
  stash: (args) => args[0] === 'list' || args[0] === 'show',
  reflog: (args) => args.length === 0 || args[0] === 'show',
  worktree: (args) => args[0] === 'list',
};

/** `git SUB args`: the subcommand and its arguments must be read-only. No global options: -c could set a pager or alias to run, -C points git at another repository. */
function gitIsReadOnly(args: string[]): boolean {
  const [sub, ...rest] = args;
  const rule = sub === undefined ? undefined : GIT_READ_ONLY[sub];
  return rule !== undefined && rule(rest);
}
