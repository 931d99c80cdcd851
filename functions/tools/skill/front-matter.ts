/** A front matter value as the flat subset of YAML that skill files use: text, a boolean, a number or a list of texts. */
export type FrontMatterValue = string | number | boolean | string[];

export interface FrontMatter {
  fields: Record<string, FrontMatterValue>;
  /** The text after the front matter (all of it when there is none). */
  body: string;
}

const FENCE = /^---\s*\n([\s\S]*?)---\s*\n?/;
const KEY_LINE = /^([A-Za-z0-9_-]+):(?:\s+(.*))?$/;

/**
 * Splits a Markdown file into its `---` front matter and body, as the reference's skill loader
 * does. Only flat `key: value` lines are understood (quoted or plain text, `true`/`false`,
 * numbers, `[a, b]` and `- item` lists, `|`/`>` blocks); anything else is kept as plain text, so
 * a value YAML would refuse (`[unclosed`) still reads as what was written.
 */
export function parseFrontMatter(text: string): FrontMatter {
  const match = FENCE.exec(text);
  if (!match) return { fields: {}, body: text };
  const fields: Record<string, FrontMatterValue> = {};
  const lines = (match[1] ?? '').split('\n');
  for (let i = 0; i < lines.length; i++) {
    const key = KEY_LINE.exec(lines[i]!.trimEnd());
    if (!key) continue;
    const raw = (key[2] ?? '').trim();
    const nested: string[] = [];
    while (i + 1 < lines.length && /^\s+\S|^-\s/.test(lines[i + 1]!)) nested.push(lines[++i]!);
    fields[key[1]!] = fieldValue(raw, nested);
  }
  return { fields, body: text.slice(match[0].length) };
}

function fieldValue(raw: string, nested: string[]): FrontMatterValue {
  if (raw === '' && nested.length > 0 && nested.every((l) => /^\s*-\s/.test(l))) return nested.map((l) => unquote(l.replace(/^\s*-\s+/, '').trim()));
  if (raw === '|' || raw === '>') return nested.map((l) => l.trim()).join(raw === '|' ? '\n' : ' ');
  if (/^\[.*\]$/.test(raw))
    return raw
      .slice(1, -1)
      .split(',')
      .map((s) => unquote(s.trim()))
      .filter((s) => s.length > 0);
  if (raw === 'true' || raw === 'false') return raw === 'true';
  if (/^-?\d+(\.\d+)?$/.test(raw)) return Number(raw);
  const text = unquote(raw);
  return nested.length > 0 ? [text, ...nested.map((l) => l.trim())].join(' ').trim() : text;
}

function unquote(value: string): string {
  if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) {
    try {
      return JSON.parse(value) as string;
    } catch {
      return value.slice(1, -1);
    }
  }
  if (value.length >= 2 && value.startsWith("'") && value.endsWith("'")) return value.slice(1, -1).replaceAll("''", "'");
  return value;
}
