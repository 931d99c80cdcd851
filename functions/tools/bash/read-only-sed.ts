/**
 * sed is read-only in two shapes only (after its flags passed the list in safe-flags.ts):
 * - printing lines: `-n` and scripts made of `p`, `Np`, `N,Mp` (`;`-separated), files allowed;
 * - one substitution `s/a/b/FLAGS` (flags from gpimIM and one digit) read from stdin, as inside a
 *   pipeline: with a file operand it is the first step of an in-place edit.
 * Everything else — `$` addresses, `w`/`e` commands, other flags — is not.
 */
export function sedIsReadOnly(args: string[]): boolean {
  const scripts: string[] = [];
  const flags: string[] = [];
  let files = 0;
  let explicitScript = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '-e' || a === '--expression') {
      explicitScript = true;
      scripts.push(args[++i] ?? '');
    } else if (a.startsWith('--expression=') || a.startsWith('-e=')) {
      explicitScript = true;
      scripts.push(a.slice(a.indexOf('=') + 1));
    } else if (a.startsWith('-') && a !== '--') flags.push(a);
    else if (a !== '--') {
      if (!explicitScript && scripts.length === 0) scripts.push(a);
      else files++;
    }
  }
  if (scripts.length === 0 || scripts.some(isDangerous)) return false;
  if (printsLines(flags, scripts)) return true;
  return files === 0 && substitutes(flags, scripts);
}

function flagsWithin(flags: string[], allowed: string[]): boolean {
  return flags.every((f) => (!f.startsWith('--') && f.length > 2 ? [...f.slice(1)].every((c) => allowed.includes(`-${c}`)) : allowed.includes(f)));
}

function printsLines(flags: string[], scripts: string[]): boolean {
  if (!flagsWithin(flags, ['-n', '--quiet', '--silent', '-E', '--regexp-extended', '-r', '-z', '--zero-terminated', '--posix'])) return false;
  const quiet = flags.some((f) => f === '--quiet' || f === '--silent' || (!f.startsWith('--') && f.includes('n')));
  return quiet && scripts.every((s) => s.split(';').every((c) => /^(?:\d+|\d+,\d+)?p$/.test(c.trim())));
}

function substitutes(flags: string[], scripts: string[]): boolean {
  if (!flagsWithin(flags, ['-E', '--regexp-extended', '-r', '--posix']) || scripts.length !== 1) return false;
  const script = scripts[0]!.trim();
  if (!script.startsWith('s/') || script.includes(';')) return false;
  let slashes = 0;
  let last = -1;
  for (let i = 2; i < script.length; i++) {
    if (script[i] === '\\') i++;
    else if (script[i] === '/') {
      slashes++;
      last = i;
    }
  }
  return slashes === 2 && /^[gpimIM]*[1-9]?[gpimIM]*$/.test(script.slice(last + 1));
}

/** Shapes that could hide a write, a program run or a different command from the checks above. */
function isDangerous(script: string): boolean {
  const s = script.trim();
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the range is "anything but ASCII", which starts at \x01
  if (/[^\x01-\x7F]/.test(s) || /[{}\n$]/.test(s)) return true;
  const hash = s.indexOf('#');
  if (hash !== -1 && !(hash > 0 && s[hash - 1] === 's')) return true;
  if (/^!/.test(s) || /[/\d]!/.test(s) || /^,/.test(s) || /,\s*[+-]/.test(s) || /\d\s*~\s*\d|,\s*~\s*\d/.test(s)) return true;
  if (/s\\/.test(s) || /\\[|#%@]/.test(s) || /\\\/.*[wW]/.test(s) || /\/[^/]*\s+[wWeE]/.test(s)) return true;
  if (/^s\//.test(s) && !/^s\/[^/]*\/[^/]*\/[^/]*$/.test(s)) return true;
  const flags = s.match(/s([^\\\n]).*?\1.*?\1(.*?)$/)?.[2] ?? '';
  return /[wWeE]/.test(flags);
}
