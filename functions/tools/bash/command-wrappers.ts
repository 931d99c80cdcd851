/**
 * Commands that run another command given in their arguments. A wrapper's words are skipped to
 * reach the command it runs, so `timeout 5 rm x` is matched as `rm x` too.
 *
 * SAFE wrappers change only how long, how nicely or how buffered the command runs: an allow rule
 * for the inner command covers them (`timeout 5 npm test` is covered by `Bash(npm test:*)`).
 * The others change who runs it, with which environment, or read its words from input: they are
 * looked through by deny and ask rules only, and an allow rule must name the wrapper itself.
 */
export const SAFE_WRAPPERS: ReadonlySet<string> = new Set(['timeout', 'time', 'nice', 'nohup', 'stdbuf']);

/** For each wrapper: its options that take a value as the next word. */
const OPTIONS_WITH_VALUE: Record<string, ReadonlySet<string>> = {
  timeout: new Set(['-s', '--signal', '-k', '--kill-after']),
  time: new Set(['-f', '--format', '-o', '--output']),
  nice: new Set(['-n', '--adjustment']),
  nohup: new Set(),
  stdbuf: new Set(['-i', '-o', '-e', '--input', '--output', '--error']),
  env: new Set(['-u', '--unset', '-C', '--chdir', '-S', '--split-string']),
  command: new Set(),
  exec: new Set(['-a']),
  builtin: new Set(),
  sudo: new Set([
    '-u',
    '--user',
    '-g',
    '--group',
    '-C',
    '--close-from',
    '-D',
    '--chdir',
    '-h',
    '--host',
    '-p',
    '--prompt',
    '-r',
    '--role',
    '-t',
    '--type',
    '-U',
    '--other-user',
    '-T',
    '--command-timeout',
  ]),
  doas: new Set(['-u', '-C']),
  xargs: new Set([
    '-a',
    '--arg-file',
    '-d',
    '--delimiter',
    '-E',
    '-e',
    '--eof',
    '-I',
    '-i',
    '--replace',
    '-L',
    '-l',
    '--max-lines',
    '-n',
    '--max-args',
    '-P',
    '--max-procs',
    '-s',
    '--max-chars',
  ]),
  coproc: new Set(),
  setsid: new Set(),
  ionice: new Set(['-c', '--class', '-n', '--classdata', '-p', '--pid', '-P', '--pgid', '-u', '--uid']),
  taskset: new Set(),
  chrt: new Set(),
  flock: new Set(['-w', '--wait', '--timeout', '-E', '--conflict-exit-code']),
  unbuffer: new Set(),
  busybox: new Set(),
  strace: new Set(['-o', '-e', '-p', '-s', '-u', '-E', '-a', '-b', '-I', '-O', '-P', '-S', '-X']),
  ltrace: new Set(['-o', '-e', '-p', '-s', '-u', '-a', '-n', '-l', '-x']),
  watch: new Set(['-n', '--interval', '-d', '--differences', '-q', '--equexit']),
  caffeinate: new Set(['-t', '-w']),
};

/** Wrappers whose first operands are not the command (timeout's duration, taskset's mask, flock's lock file). */
const LEADING_OPERANDS: Record<string, number> = { timeout: 1, taskset: 1, chrt: 1, flock: 1 };

/**
 * Where the wrapped command starts in `words` (values, unquoted), when `words[0]` is a wrapper
 * (by its name without folder); undefined when it is not one or wraps nothing. `env` also skips
 * the assignments it takes; `command -v` and `-V` only print, and wrap nothing.
 */
export function wrappedCommandStart(words: readonly string[], safeOnly: boolean): number | undefined {
  const name = baseName(words[0] ?? '');
  const withValue = OPTIONS_WITH_VALUE[name];
  if (!withValue) return undefined;
  // An allow rule looks past a safe wrapper only as the shell's own (`time -p`) or PATH's, never a
  // program named by its folder or a `time` told to write a file (-o).
  if (safeOnly && (!SAFE_WRAPPERS.has(words[0]!) || (name === 'time' && words.slice(1).some((w) => w.startsWith('-') && w !== '-p')))) return undefined;
  let operands = LEADING_OPERANDS[name] ?? 0;
  for (let i = 1; i < words.length; i++) {
    const word = words[i]!;
    if (word === '--') return i + 1 < words.length && operands === 0 ? i + 1 : skipOperands(words, i + 1, operands);
    if (name === 'command' && /^-[pvV]+$/.test(word)) {
      if (/[vV]/.test(word)) return undefined;
      continue;
    }
    if (name === 'env' && /^[A-Za-z_][A-Za-z0-9_]*=/.test(word)) continue;
    if (word.startsWith('-') && word.length > 1) {
      if (withValue.has(word)) i++;
      continue;
    }
    if (operands > 0) {
      operands--;
      continue;
    }
    return i;
  }
  return undefined;
}

function skipOperands(words: readonly string[], from: number, operands: number): number | undefined {
  const start = from + operands;
  return start < words.length ? start : undefined;
}

/** The shells whose `-c STRING` runs STRING as a command line (`su -c` and `runuser -c` too). */
export const SHELLS: ReadonlySet<string> = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'mksh', 'ash', 'fish', 'su', 'runuser']);

/**
 * The command line a shell or `eval` would run from these words, when there is one: `bash -c S`
 * (also `-lc`, `-ec`, …) gives S; `eval a b` gives `a b`. Undefined when the words run none.
 */
export function innerCommandLine(words: readonly (string | undefined)[]): { line?: string; dynamic: boolean } | undefined {
  const name = baseName(words[0] ?? '');
  if (name === 'env') {
    // `env -S 'rm x'` splits its value into a command line.
    const split = words.findIndex((w) => w === '-S' || w === '--split-string');
    if (split !== -1) return words[split + 1] === undefined ? { dynamic: true } : { line: words[split + 1], dynamic: false };
    return undefined;
  }
  if (name === 'eval') {
    const rest = words.slice(1);
    return rest.every((w) => w !== undefined) ? { line: rest.join(' '), dynamic: false } : { dynamic: true };
  }
  if (!SHELLS.has(name)) return undefined;
  const flag = words.findIndex((w, i) => i > 0 && w !== undefined && /^-[a-zA-Z]*c[a-zA-Z]*$/.test(w));
  if (flag === -1) return undefined;
  const line = words[flag + 1];
  return line === undefined ? { dynamic: true } : { line, dynamic: false };
}

/** `find … -exec CMD … ;` (and -execdir, -ok, -okdir): the commands find runs, as word lists. */
export function findExecCommands(words: readonly string[]): string[][] {
  if (baseName(words[0] ?? '') !== 'find') return [];
  const found: string[][] = [];
  for (let i = 1; i < words.length; i++) {
    if (!/^-(exec|execdir|ok|okdir)$/.test(words[i]!)) continue;
    const end = words.findIndex((w, j) => j > i && (w === ';' || w === '+'));
    found.push(words.slice(i + 1, end === -1 ? undefined : end));
    if (end !== -1) i = end;
  }
  return found.filter((c) => c.length > 0);
}

export function baseName(program: string): string {
  return program.includes('/') ? program.slice(program.lastIndexOf('/') + 1) : program;
}
