/** A rule of dependency-rules.json's `forbidden` list. */
export interface ForbiddenRule {
  from: string;
  to: string;
  why: string;
}

/** How the rules follow the folders. */
export interface RuleChanges {
  /** A `functions/` folder named in a rule → the folders it now stands for (a rule against `agent` also holds against `turn`, split off it). */
  renames: Record<string, string[]>;
  /** Rules added, or replaced when a rule with the same `from` exists. */
  upsert: ForbiddenRule[];
}

const RULE_LINE = /^(\s*)(\{"from": *"[^"]*", *"to":.*\})(,?)\s*$/;

/** `^functions/(a|b)/` and `^functions/a/` with the renamed folders substituted, each named once. */
function renameFolders(pattern: string, renames: Record<string, string[]>): string {
  return pattern.replace(/\^functions\/(\(([\w|-]+)\)|[\w-]+)\//, (whole, group: string, alternatives?: string) => {
    const names = (alternatives ?? group).split('|');
    const renamed = [...new Set(names.flatMap((n) => renames[n] ?? [n]))];
    if (renamed.join('|') === names.join('|')) return whole;
    return renamed.length === 1 && !alternatives ? `^functions/${renamed[0]}/` : `^functions/(${renamed.join('|')})/`;
  });
}

const ruleLine = (indent: string, rule: ForbiddenRule, comma: string): string =>
  `${indent}{"from": ${JSON.stringify(rule.from)}, "to": ${JSON.stringify(rule.to)}, "why": ${JSON.stringify(rule.why)}}${comma}`;

/**
 * dependency-rules.json with its `forbidden` rules following the folders. The file is edited line
 * by line (one rule a line, as it is written), so rules the change does not touch keep their bytes
 * and a second run changes nothing.
 */
export function rewriteRules(text: string, changes: RuleChanges): string {
  const lines = text.split('\n');
  const ruleAt: number[] = [];
  const pending = new Map(changes.upsert.map((r) => [r.from, r]));
  lines.forEach((line, i) => {
    const m = RULE_LINE.exec(line);
    if (!m) return;
    ruleAt.push(i);
    const rule = JSON.parse(m[2]!) as ForbiddenRule;
    const next = pending.get(rule.from) ?? { ...rule, from: renameFolders(rule.from, changes.renames), to: renameFolders(rule.to, changes.renames) };
    pending.delete(rule.from);
    if (JSON.stringify(next) !== JSON.stringify(rule)) lines[i] = ruleLine(m[1]!, next, m[3]!);
  });
  const last = ruleAt.at(-1);
  if (last === undefined || pending.size === 0) return lines.join('\n');
  const indent = RULE_LINE.exec(lines[last]!)![1]!;
  const trailing = RULE_LINE.exec(lines[last]!)![3]!;
  if (!trailing) lines[last] += ',';
  const added = [...pending.values()].map((r, i, all) => ruleLine(indent, r, i === all.length - 1 ? trailing : ','));
  lines.splice(last + 1, 0, ...added);
  return lines.join('\n');
}

/** "not a, b" for a rule of the form `^functions/x/` → `^functions/(a|b)/`; undefined for other forms. */
export function forbiddenSummary(folder: string, rules: readonly ForbiddenRule[]): string | undefined {
  const rule = rules.find((r) => r.from === `^${folder}/`);
  const m = rule && /^\^functions\/(?:\(([\w|-]+)\)|([\w-]+))\/$/.exec(rule.to);
  if (!m) return undefined;
  return `not ${(m[1] ?? m[2]!).split('|').join(', ')}`;
}
