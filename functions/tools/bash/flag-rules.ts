import { SAFE_FLAGS } from './safe-flags.ts';

type ValueKind = 'none' | 'number' | 'string' | 'char' | 'braces' | 'eof';

const SUFFIX: [string, ValueKind][] = [
  ['{}', 'braces'],
  ['#', 'number'],
  ['=', 'string'],
  ['@', 'char'],
  ['^', 'eof'],
];
const FLAG = /^-[a-zA-Z0-9_-]/;

export type FlagOptions = {
  /** `--` is just another word to this tool (it keeps reading flags after it). */
  ignoresDoubleDash?: boolean;
  /** git's `-5` for `-n 5`. */
  numericShorthand?: boolean;
  /** grep's and rg's `-A20`: a short flag with its number attached. */
  attachedNumbers?: boolean;
  /** xargs: the first word that is not a flag is the command it runs, which must be one of these. */
  targets?: readonly string[];
};

const parsed = new Map<string, Map<string, ValueKind>>();

function flagsOf(command: string): Map<string, ValueKind> {
  let flags = parsed.get(command);
  if (flags) return flags;
  const spec = SAFE_FLAGS[command];
  if (spec === undefined) throw new Error(`no flag list for ${command}`);
  flags = new Map();
  for (const word of spec.split(/\s+/).filter(Boolean)) {
    const suffix = SUFFIX.find(([s]) => word.length > s.length + 1 && word.endsWith(s));
    flags.set(suffix ? word.slice(0, -suffix[0].length) : word, suffix ? suffix[1] : 'none');
  }
  parsed.set(command, flags);
  return flags;
}

function valueFits(value: string, kind: ValueKind): boolean {
  if (kind === 'number') return /^\d+$/.test(value);
  if (kind === 'char') return value.length === 1;
  if (kind === 'braces') return value === '{}';
  if (kind === 'eof') return value === 'EOF';
  return kind === 'string';
}

/**
 * Whether every flag in `args` is on `command`'s list with a value of the right kind. Words that
 * are not flags (paths, patterns, revisions) pass. Modelled on getopt so that a flag's value is
 * consumed the way the tool itself consumes it: a value-taking flag inside a bundle (`-rI x`) or
 * with an empty `=` is refused, since the tool and this check could read the next word
 * differently, and a string value that looks like a flag is refused (except git's `--sort=-key`).
 */
export function flagsAllowed(command: string, args: string[], options: FlagOptions = {}): boolean {
  const flags = flagsOf(command);
  for (let i = 0; i < args.length; i++) {
    let word = args[i]!;
    if (options.targets && (!word.startsWith('-') || word === '--')) {
      if (word === '--' && i + 1 < args.length) word = args[++i]!;
      return options.targets.includes(word);
    }
    if (word === '--') {
      if (options.ignoresDoubleDash) continue;
      return true;
    }
    if (!(word.length > 1 && FLAG.test(word))) continue;
    const hasEquals = word.includes('=');
    const [flag = '', ...rest] = word.split('=');
    const kind = flags.get(flag);
    if (kind === undefined) {
      if (options.numericShorthand && /^-\d+$/.test(flag)) continue;
      if (options.attachedNumbers && !flag.startsWith('--') && flag.length > 2 && /^\d+$/.test(flag.slice(2))) {
        const attached = flags.get(flag.slice(0, 2));
        if (attached === 'number' || attached === 'string') continue;
      }
      if (!flag.startsWith('--') && flag.length > 2 && [...flag.slice(1)].every((c) => flags.get(`-${c}`) === 'none')) continue;
      return false;
    }
    if (kind === 'none') {
      if (hasEquals) return false;
      continue;
    }
    let value: string;
    if (hasEquals) value = rest.join('=');
    else {
      const next = args[i + 1];
      if (next === undefined || (next.length > 1 && FLAG.test(next))) return false;
      value = next;
      i++;
    }
    const reverseSort = flag === '--sort' && command.startsWith('git ') && /^-[a-zA-Z]/.test(value);
    if (kind === 'string' && value.startsWith('-') && !reverseSort) return false;
    if (!valueFits(value, kind)) return false;
  }
  return true;
}
