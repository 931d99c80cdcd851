import { isInsideWorkspace } from '../../../sandbox-runner/common/virtual-paths.ts';
import { flagsAllowed, type FlagOptions } from './flag-rules.ts';
import { gitIsReadOnly } from './read-only-git.ts';
import { sedIsReadOnly } from './read-only-sed.ts';

/**
 * Which commands may run without changing anything, and with which arguments
 * (docs/tools.md, "Read-only classification of Bash commands"). A command that is not listed, or that uses an argument its
 * rule rejects, is not read-only. Rules look at the words after the command name (already
 * unquoted).
 */
export type ArgsRule = (args: string[]) => boolean;

const any: ArgsRule = () => true;
const none: ArgsRule = (args) => args.length === 0;
const exactly =
  (...allowed: string[][]): ArgsRule =>
  (args) =>
    allowed.some((a) => a.join(' ') === args.join(' '));
const flags =
  (command: string, options?: FlagOptions, extra?: ArgsRule): ArgsRule =>
  (args) =>
    flagsAllowed(command, args, options) && (extra ? extra(args) : true);
const isFlag = (a: string) => a.startsWith('-');

/**
 * Commands that open the files they are given: reading outside the workspace is not the quiet
 * kind of read, so it asks. Others (echo, basename, …) only print words.
 */
export const FILE_READING_COMMANDS = new Set([
  'cat',
  'head',
  'tail',
  'wc',
  'grep',
  'rg',
  'ls',
  'file',
  'stat',
  'tree',
  'diff',
  'cmp',
  'comm',
  'cut',
  'tr',
  'nl',
  'od',
  'hexdump',
  'strings',
  'sort',
  'uniq',
  'jq',
  'find',
  'sed',
  'du',
  'column',
  'fold',
  'expand',
  'unexpand',
  'rev',
  'tac',
  'paste',
  'md5sum',
  'sha1sum',
  'sha256sum',
  'base64',
  'fmt',
  'pr',
  'readlink',
  'realpath',
  'tsort',
  'fd',
  'fdfind',
  'xargs',
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

/** Commands whose every flag only changes what is printed: any arguments. */
const PRINT_ONLY = [
  'cal',
  'uptime',
  'cat',
  'head',
  'tail',
  'wc',
  'stat',
  'strings',
  'hexdump',
  'od',
  'nl',
  'id',
  'uname',
  'free',
  'df',
  'du',
  'locale',
  'groups',
  'nproc',
  'basename',
  'dirname',
  'realpath',
  'cut',
  'paste',
  'tr',
  'column',
  'tac',
  'rev',
  'fold',
  'expand',
  'unexpand',
  'fmt',
  'comm',
  'cmp',
  'numfmt',
  'readlink',
  'diff',
  'true',
  'false',
  'sleep',
  'which',
  'type',
  'expr',
  'test',
  'getconf',
  'seq',
  'tsort',
  'pr',
  'ls',
  'echo',
];

/** Tools xargs may run: none of their flags writes, runs code or reaches the network. */
const XARGS_TARGETS = ['echo', 'printf', 'wc', 'grep', 'head', 'tail'];

const FIND_ACTIONS = /^-(delete|exec|execdir|ok|okdir|fprint0?|fls|fprintf)$/;
const JQ_BANNED = /^(-f|--from-file|--rawfile|--slurpfile|--run-tests|-L|--library-path)(=|$)/;

export const READ_ONLY_COMMANDS: Record<string, ArgsRule> = {
  ...Object.fromEntries(PRINT_ONLY.map((name) => [name, any])),
  pwd: none,
  whoami: none,
  alias: none,
  history: (args) => args.length === 0 || (args.length === 1 && /^\d+$/.test(args[0]!)),
  arch: (args) => args.length === 0 || (args.length === 1 && (args[0] === '-h' || args[0] === '--help')),
  cd: (args) => args.length <= 1,
  // Flags only: a file operand would be input, a second one the output file.
  uniq: (args) => args.every((a, i) => isFlag(a) || (/^\d+$/.test(a) && /^-[fsw]$/.test(args[i - 1] ?? ''))),
  find: (args) => !args.some((a) => FIND_ACTIONS.test(a)),
  // A filter and files; no flag that loads code or reads files into variables, no environment.
  jq: (args) =>
    args.some((a) => !isFlag(a)) &&
    !args.some((a) => JQ_BANNED.test(a) || /\benv\b|\$ENV\b/.test(a)) &&
    args.filter(isFlag).every((a) => /^(-[a-zA-Z]+|--[a-zA-Z-]+(=\S+)?)$/.test(a)),
  ifconfig: (args) => args.length === 0 || (args.length === 1 && /^[a-zA-Z][a-zA-Z0-9_-]*$/.test(args[0]!)),
  ip: exactly(['addr']),
  node: exactly(['-v'], ['--version']),
  python: exactly(['--version']),
  python3: exactly(['--version']),
  claude: exactly(['-h'], ['--help']),
  docker: (args) => {
    const [sub, ...rest] = args;
    if (sub === 'ps' || sub === 'images') return true;
    return (sub === 'logs' || sub === 'inspect') && flagsAllowed(`docker ${sub}`, rest);
  },
  xargs: flags('xargs', { targets: XARGS_TARGETS }),
  file: flags('file'),
  sed: flags('sed', {}, sedIsReadOnly),
  sort: flags('sort'),
  man: flags('man'),
  help: flags('help'),
  info: flags('info'),
  netstat: flags('netstat'),
  ss: flags('ss'),
  lsof: flags('lsof', {}, (args) => !args.some((a) => a.startsWith('+m'))),
  pgrep: flags('pgrep'),
  // BSD-style `e` (a bare word of letters with an e, as in `ps axe`) prints every process's environment.
  ps: flags('ps', {}, (args) => !args.some((a) => !isFlag(a) && /^[a-zA-Z]*e[a-zA-Z]*$/.test(a))),
  base64: flags('base64', { ignoresDoubleDash: true }),
  grep: flags('grep', { attachedNumbers: true }),
  rg: flags('rg', { attachedNumbers: true }),
  sha256sum: flags('sha256sum'),
  sha1sum: flags('sha1sum'),
  md5sum: flags('md5sum'),
  tree: flags('tree'),
  fd: flags('fd'),
  fdfind: flags('fdfind'),
  tput: flags('tput', {}, tputIsReadOnly),
  // A word that is not a flag's value sets the clock unless it is a `+FORMAT`.
  date: flags('date', {}, dateIsReadOnly),
  // Any operand sets the host name.
  hostname: (args) => flagsAllowed('hostname', args) && args.every((a) => /^(-[a-zA-Z]|--[a-zA-Z-]+)$/.test(a)),
  git: gitIsReadOnly,
};

function dateIsReadOnly(args: string[]): boolean {
  const withValue = new Set(['-d', '--date', '-r', '--reference', '--iso-8601', '--rfc-3339']);
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (isFlag(a)) {
      if (!a.includes('=') && withValue.has(a)) i++;
    } else if (!a.startsWith('+')) return false;
  }
  return true;
}

/** Capabilities that reset or reprogram the terminal, run its init program or clear its history. */
const TPUT_WRITES = new Set([
  'init',
  'reset',
  'rs1',
  'rs2',
  'rs3',
  'is1',
  'is2',
  'is3',
  'iprog',
  'if',
  'rf',
  'clear',
  'flash',
  'mc0',
  'mc4',
  'mc5',
  'mc5i',
  'mc5p',
  'pfkey',
  'pfloc',
  'pfx',
  'pfxl',
  'smcup',
  'rmcup',
]);

function tputIsReadOnly(args: string[]): boolean {
  return !args.some((a) => TPUT_WRITES.has(a));
}
