import { flagsAllowed } from './flag-rules.ts';
import { SAFE_FLAGS } from './safe-flags.ts';

type Check = (args: string[]) => boolean;

/**
 * Extra checks beyond the flag lists, for subcommands whose plain words can write or reach out:
 * a name after `git tag`/`git branch` creates it, `git reflog expire|delete` rewrites logs,
 * `git ls-remote URL` contacts any host, `git remote` with a word is a change.
 */
const EXTRA: Record<string, Check> = {
  'git tag': (args) =>
    listsOnly(args, new Set(['--contains', '--no-contains', '--merged', '--no-merged', '--points-at', '--sort', '--format', '-n']), new Set()),
  'git branch': (args) => listsOnly(args, new Set(['--contains', '--no-contains', '--points-at', '--sort']), new Set(['--merged', '--no-merged'])),
  'git reflog': (args) => {
    const first = args.find((a) => !a.startsWith('-'));
    return first === undefined || !['expire', 'delete', 'exists'].includes(first);
  },
  'git ls-remote': (args) => args.every((a) => a.startsWith('-') || !/:\/\/|[@:$]/.test(a)),
  'git remote show': (args) => {
    const names = args.filter((a) => a !== '-n');
    return names.length === 1 && /^[a-zA-Z0-9_-]+$/.test(names[0]!);
  },
  'git remote': (args) => args.every((a) => a === '-v' || a === '--verbose'),
};

/** Longest first, so `git remote show` wins over `git remote` and `git stash list` is not `git stash`. */
const SUBCOMMANDS = Object.keys(SAFE_FLAGS)
  .filter((k) => k.startsWith('git '))
  .map((k) => k.split(' ').slice(1))
  .sort((a, b) => b.length - a.length);

/**
 * `git SUB args`: the subcommand (one to two words, or `config --get`) must be allow-listed and
 * every flag on its list. No global options: -c could set a pager or alias to run, -C points git
 * at another repository.
 */
export function gitIsReadOnly(args: string[]): boolean {
  const words = SUBCOMMANDS.find((w) => w.every((part, i) => args[i] === part));
  if (!words) return false;
  const key = `git ${words.join(' ')}`;
  const rest = args.slice(words.length);
  if (!flagsAllowed(key, rest, { numericShorthand: true })) return false;
  return EXTRA[key]?.(rest) ?? true;
}

/**
 * `git tag`/`git branch` list unless given a plain word: then it is a name to create, except as
 * a pattern after `-l`/`--list` or as the value of a flag that takes one.
 */
function listsOnly(args: string[], withValue: Set<string>, withOptionalValue: Set<string>): boolean {
  let listing = false;
  let afterDashDash = false;
  let last = '';
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--' && !afterDashDash) {
      afterDashDash = true;
      last = '';
      continue;
    }
    if (!afterDashDash && a.startsWith('-')) {
      if (a === '-l' || a === '--list' || (!a.startsWith('--') && !a.includes('=') && a.length > 2 && a.slice(1).includes('l'))) listing = true;
      last = a.split('=')[0]!;
      if (!a.includes('=') && withValue.has(a)) i++;
      continue;
    }
    if (!listing && !withOptionalValue.has(last)) return false;
  }
  return true;
}
