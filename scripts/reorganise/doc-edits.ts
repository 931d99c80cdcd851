/** Whole lines of a doc that the reorganisation rewrites beyond the paths in them. */
export interface DocEdit {
  file: string;
  /** One or more whole lines, as they read once moved paths are rewritten. */
  from: string;
  /** What they become (lines added below `from` repeat it first); `''` deletes them. */
  to: string;
}

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const wholeLines = (s: string): RegExp => new RegExp(`^${escape(s)}$`, 'm');

/**
 * `text` with each edit applied once: an edit whose result is already there is skipped (so a
 * second run changes nothing); one whose lines are not there is reported, since another branch
 * has reworded them and a person has to decide (a deletion whose lines are gone is done).
 */
export function applyDocEdits(text: string, edits: readonly DocEdit[], report: (edit: DocEdit) => void): string {
  let out = text;
  for (const edit of edits) {
    if (edit.to === '') {
      out = out.replace(new RegExp(`^${escape(edit.from)}\n`, 'm'), '');
      continue;
    }
    if (wholeLines(edit.to).test(out)) continue;
    if (!wholeLines(edit.from).test(out)) {
      report(edit);
      continue;
    }
    out = out.replace(wholeLines(edit.from), () => edit.to);
  }
  return out;
}
