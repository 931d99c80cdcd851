import type { Tool } from '../tool.ts';

/** A name split into words: `mcp__slack__send_message` → slack, send, message; `NotebookEdit` → notebook, edit. */
function nameParts(name: string): { parts: string[]; full: string; isMcp: boolean } {
  if (name.startsWith('mcp__')) {
    const rest = name.replace(/^mcp__/, '').toLowerCase();
    return {
      parts: rest
        .split('__')
        .flatMap((p) => p.split('_'))
        .filter(Boolean),
      full: rest.replace(/__/g, ' ').replace(/_/g, ' '),
      isMcp: true,
    };
  }
  const parts = name
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .replace(/_/g, ' ')
    .toLowerCase()
    .split(/\s+/)
    .filter(Boolean);
  return { parts, full: parts.join(' '), isMcp: false };
}

function wordPattern(term: string): RegExp {
  return new RegExp(`\\b${term.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`);
}

/**
 * Keyword search over deferred tools (docs/tool-pipeline.md, "ToolSearch"): an exact name wins
 * outright; `mcp__server…` is a prefix match; otherwise each term scores 10 for a whole word of
 * the name (12 for MCP tools), 5 for part of a word (6), 3 for a match across words when nothing
 * else matched, 4 for the search hint and 2 for the description. `+term` must match (name,
 * description or hint) for a tool to be ranked at all.
 */
export function searchTools(query: string, deferred: readonly Tool[], all: readonly Tool[], maxResults: number): string[] {
  const q = query.toLowerCase().trim();
  const exact = deferred.find((t) => t.name.toLowerCase() === q) ?? all.find((t) => t.name.toLowerCase() === q);
  if (exact) return [exact.name];
  if (q.startsWith('mcp__') && q.length > 5) {
    const prefixed = deferred
      .filter((t) => t.name.toLowerCase().startsWith(q))
      .slice(0, maxResults)
      .map((t) => t.name);
    if (prefixed.length > 0) return prefixed;
  }
  const words = q.split(/\s+/).filter((w) => w.length > 0);
  const required: string[] = [];
  const optional: string[] = [];
  for (const w of words) (w.startsWith('+') && w.length > 1 ? required : optional).push(w.startsWith('+') && w.length > 1 ? w.slice(1) : w);
  const terms = required.length > 0 ? [...required, ...optional] : words;
  const patterns = new Map(terms.map((t) => [t, wordPattern(t)]));
  const candidates =
    required.length === 0
      ? deferred
      : deferred.filter((tool) => {
          const n = nameParts(tool.name);
          const description = tool.description.toLowerCase();
          const hint = tool.searchHint?.toLowerCase() ?? '';
          return required.every(
            (t) =>
              n.parts.includes(t) || n.parts.some((p) => p.includes(t)) || patterns.get(t)!.test(description) || (hint !== '' && patterns.get(t)!.test(hint)),
          );
        });
  return candidates
    .map((tool) => ({ name: tool.name, score: score(tool, terms, patterns) }))
    .filter((r) => r.score > 0)
    .sort((a, b) => b.score - a.score)
    .slice(0, maxResults)
    .map((r) => r.name);
}

function score(tool: Tool, terms: readonly string[], patterns: ReadonlyMap<string, RegExp>): number {
  const n = nameParts(tool.name);
  const description = tool.description.toLowerCase();
  const hint = tool.searchHint?.toLowerCase() ?? '';
  let total = 0;
  for (const term of terms) {
    const pattern = patterns.get(term)!;
    if (n.parts.includes(term)) total += n.isMcp ? 12 : 10;
    else if (n.parts.some((p) => p.includes(term))) total += n.isMcp ? 6 : 5;
    if (n.full.includes(term) && total === 0) total += 3;
    if (hint && pattern.test(hint)) total += 4;
    if (pattern.test(description)) total += 2;
  }
  return total;
}
