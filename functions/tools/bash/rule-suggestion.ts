import { formatRuleValue } from '../../permissions/rule-syntax.ts';
import { bashCommandParts } from './command-parts.ts';
import { baseName, SHELLS } from './command-wrappers.ts';

/**
 * Programs whose arguments are code or another command: a prefix rule for them (`Bash(python:*)`,
 * `Bash(xargs:*)`, `Bash(find:*)` with its -exec) would allow anything at all, so only the exact
 * words are suggested.
 */
const RUNS_ANYTHING: ReadonlySet<string> = new Set([
  ...SHELLS,
  'eval',
  'exec',
  'command',
  'builtin',
  'env',
  'xargs',
  'sudo',
  'doas',
  'find',
  'awk',
  'gawk',
  'mawk',
  'sed',
  'perl',
  'python',
  'python3',
  'node',
  'deno',
  'bun',
  'ruby',
  'php',
  'lua',
  'npx',
  'ssh',
  'watch',
  'nohup',
  'timeout',
  'nice',
  'stdbuf',
  'time',
  'git',
]);
/** A plain word: no quotes, expansions, globs or operators. */
const PLAIN = /^[\w.:@%+,-]+$/;

/**
 * The rule to offer for remembering an approved command, safe under part-by-part matching
 * (docs/security.md, "Bash rules"): when one part needed approval, a prefix rule for its program
 * and subcommand (`npm test -- --ci` → `Bash(npm test:*)`, `git status && npm run build` →
 * `Bash(npm run:*)`); for a program that runs other code, for several parts, or for anything the
 * grammar could not split, exactly the command, which covers nothing else.
 */
export async function suggestBashRule(command: string): Promise<string> {
  const exact = formatRuleValue({ toolName: 'Bash', content: command.trim() });
  const split = await bashCommandParts(command);
  if (!split.parsed) return exact;
  const needed = split.parts.filter((p) => !p.readOnly && !p.denyOnly);
  if (needed.length !== 1 || needed[0]!.allowForm === undefined) return exact;
  const words = needed[0]!.allowForm.split(' ');
  const [program, sub] = words;
  if (!program || !PLAIN.test(program) || RUNS_ANYTHING.has(baseName(program))) return gitRule(words) ?? exact;
  const head = sub !== undefined && PLAIN.test(sub) && !sub.startsWith('-') ? [program, sub] : [program];
  return formatRuleValue({ toolName: 'Bash', content: `${head.join(' ')}:*` });
}

/**
 * git runs other programs only through options and config (`-c core.pager=…`, aliases): a git
 * subcommand named right after `git` is a safe prefix (`Bash(git commit:*)`).
 */
function gitRule(words: string[]): string | undefined {
  if (words[0] !== 'git' || words[1] === undefined || !/^[a-z][a-z-]*$/.test(words[1])) return undefined;
  return formatRuleValue({ toolName: 'Bash', content: `git ${words[1]}:*` });
}
