import type { SkillDefinition } from './skill-definition.ts';

// The `${NAME}` placeholders a skill's body may hold (literal text, not templates).
const SKILL_DIR_VARIABLE = '$' + '{CLAUDE_SKILL_DIR}';
const SESSION_ID_VARIABLE = '$' + '{CLAUDE_SESSION_ID}';

/**
 * The text a loaded skill adds to the conversation, as the reference builds it: its folder,
 * then its body, with the arguments put in (`$ARGUMENTS`, `$ARGUMENTS[N]`, `$N` from 0, and the
 * front matter's named `$name`s), `${CLAUDE_SKILL_DIR}` and `${CLAUDE_SESSION_ID}` replaced.
 * Arguments that no placeholder took are added at the end as `ARGUMENTS: …`.
 */
export function skillPromptText(skill: SkillDefinition, args: string | undefined, sessionId: string): string {
  const text = withArguments(`Base directory for this skill: ${skill.dir}\n\n${skill.body}`, args, skill.argumentNames);
  return text.replaceAll(SKILL_DIR_VARIABLE, skill.dir).replaceAll(SESSION_ID_VARIABLE, sessionId);
}

function withArguments(text: string, args: string | undefined, names: readonly string[]): string {
  if (args === undefined) return text;
  const words = argumentWords(args);
  let out = text;
  names.forEach((name, i) => {
    out = out.replace(new RegExp(`\\$${escapeRegExp(name)}(?![\\[\\w])`, 'g'), () => words[i] ?? '');
  });
  out = out.replace(/\$ARGUMENTS\[(\d+)\]/g, (_m, n: string) => words[Number(n)] ?? '');
  out = out.replace(/\$(\d+)(?!\w)/g, (_m, n: string) => words[Number(n)] ?? '');
  out = out.replaceAll('$ARGUMENTS', args);
  return out === text && args ? `${out}\n\nARGUMENTS: ${args}` : out;
}

/** The arguments as a shell would split them (quotes group words); unbalanced quotes fall back to plain words. */
export function argumentWords(args: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < args.length; i++) {
    const c = args[i]!;
    if (quote) {
      if (c === quote) quote = undefined;
      else if (c === '\\' && quote === '"' && i + 1 < args.length) word += args[++i]!;
      else word += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      word ??= '';
    } else if (/\s/.test(c)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else word = (word ?? '') + (c === '\\' && i + 1 < args.length ? args[++i]! : c);
  }
  if (quote) return args.split(/\s+/).filter(Boolean);
  if (word !== undefined) words.push(word);
  return words;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
