import { forbiddenSummary, type ForbiddenRule } from './dependency-rules.ts';

/** A row of docs/architecture.md's folder table that the reorganisation writes. */
interface FolderRow {
  /** `functions/turn`, no trailing slash. */
  folder: string;
  holds: string;
  /** Used when dependency-rules.json has no simple rule for the folder to summarise. */
  mayImport?: string;
  /** The row a new row goes below. */
  after?: string;
}

export interface TableChanges {
  rows: FolderRow[];
  /** Folders that no longer exist: their rows go. */
  removed: string[];
}

type Graph = ReadonlyMap<string, ReadonlySet<string>>;

const ROW = /^\| `([^`]+?)\/?`( \(root files\))? \| (.*) \| (.*) \| (.*) \|$/;

/** What a folder imports, as the table writes it: `functions/` left out, `nothing` for none. */
function importsCell(folder: string, graph: Graph): string {
  const names = [...(graph.get(folder) ?? [])].sort();
  if (names.length === 0) return 'nothing';
  if (folder.startsWith('functions/')) return names.map((n) => n.replace(/^functions\//, '')).join(', ');
  const groups = new Map<string, string[]>();
  for (const n of names) groups.set(n.split('/')[0]!, [...(groups.get(n.split('/')[0]!) ?? []), n]);
  return [...groups].map(([root, ns]) => (root === 'functions' ? ns.map((n, i) => (i === 0 ? n : n.slice('functions/'.length))) : ns).join(', ')).join('; ');
}

const sameSet = (a?: ReadonlySet<string>, b?: ReadonlySet<string>): boolean => (a?.size ?? 0) === (b?.size ?? 0) && [...(a ?? [])].every((x) => b?.has(x));

/**
 * The folder table of docs/architecture.md after the moves: rows of removed folders dropped, the
 * changed and new rows written from `changes`, "may import" summarised from the rules where a rule
 * has the simple form, and "imports today" written from the import graph for every `functions/`
 * row and for any other row whose imports changed (other rows keep their bytes).
 */
export function rewriteFolderTable(text: string, changes: TableChanges, rules: readonly ForbiddenRule[], before: Graph, after: Graph): string {
  // New rows (those placed `after` another) are written afresh: mentions of a merged folder's old
  // name may already have been rewritten to its new one, leaving rows that name it twice.
  const placed = changes.rows.filter((r) => r.after).map((r) => r.folder);
  const lines = text.split('\n').filter((line) => ![...changes.removed, ...placed].includes(ROW.exec(line)?.[1] ?? ''));
  for (const row of changes.rows) {
    const at = lines.findIndex((line) => ROW.exec(line)?.[1] === row.folder);
    if (at >= 0) lines[at] = formatRow(row, ROW.exec(lines[at]!)!, rules, after);
    else {
      const below = lines.findIndex((line) => ROW.exec(line)?.[1] === row.after);
      if (below < 0) throw new Error(`docs/architecture.md: no row for ${row.after} to put ${row.folder} after`);
      lines.splice(below + 1, 0, formatRow(row, undefined, rules, after));
    }
  }
  return lines
    .map((line) => {
      const m = ROW.exec(line);
      if (!m || (!m[1]!.startsWith('functions/') && sameSet(before.get(m[1]!), after.get(m[1]!)))) return line;
      if (!after.has(m[1]!)) return line;
      const may = m[1]!.startsWith('functions/') ? (forbiddenSummary(m[1]!, rules) ?? m[4]) : m[4];
      return `| \`${m[1]}/\`${m[2] ?? ''} | ${m[3]} | ${may} | ${importsCell(m[1]!, after)} |`;
    })
    .join('\n');
}

function formatRow(row: FolderRow, existing: RegExpExecArray | undefined, rules: readonly ForbiddenRule[], graph: Graph): string {
  const may = forbiddenSummary(row.folder, rules) ?? row.mayImport ?? existing?.[4] ?? 'no extra rule';
  return `| \`${row.folder}/\` | ${row.holds} | ${may} | ${importsCell(row.folder, graph)} |`;
}
