import path from 'node:path';

/**
 * A declarative move map. `files` names single files; `folders` moves every file under a folder
 * that `files` does not name, including files added after the map was written, so a branch that
 * adds a file to a moved folder needs no edit here.
 */
export interface MoveMap {
  /** Repository path → new repository path. */
  files: Record<string, string>;
  /** Folder path ending in `/` → new folder path ending in `/`. */
  folders: Record<string, string>;
}

/** Old path → new path, for the files that actually move. */
type Plan = Map<string, string>;

/**
 * Tests mirror their source folders: `test/functions/A/x.test.ts` follows `functions/A/x.ts`, and
 * `test/functions/A/` follows a moved `functions/A/`. Entries the map names itself win.
 */
export function withMirroredTests(moves: MoveMap): MoveMap {
  const files: Record<string, string> = {};
  for (const [from, to] of Object.entries(moves.files)) {
    if (from.startsWith('functions/') && from.endsWith('.ts')) files[`test/${from.replace(/\.ts$/, '.test.ts')}`] = `test/${to.replace(/\.ts$/, '.test.ts')}`;
  }
  const folders: Record<string, string> = {};
  for (const [from, to] of Object.entries(moves.folders)) if (from.startsWith('functions/')) folders[`test/${from}`] = `test/${to}`;
  return { files: { ...files, ...moves.files }, folders: { ...folders, ...moves.folders } };
}

/** Where `p` (a file, or a folder with or without its trailing `/`) lives after the moves; `p` itself if nothing moves it. */
export function mapPath(p: string, moves: MoveMap): string {
  const file = moves.files[p];
  if (file) return file;
  const asFolder = p.endsWith('/') ? p : `${p}/`;
  let best = '';
  for (const from of Object.keys(moves.folders)) if (asFolder.startsWith(from) && from.length > best.length) best = from;
  if (!best) return p;
  const mapped = moves.folders[best]! + asFolder.slice(best.length);
  return p.endsWith('/') ? mapped : mapped.slice(0, -1);
}

/**
 * The moves to make among the tracked files. Refuses a plan that would overwrite a file, send two
 * files to one place or move a file to where another rule would move it again (a chain would make
 * a second run move things a second time).
 */
export function planMoves(tracked: readonly string[], moves: MoveMap): Plan {
  const plan: Plan = new Map();
  const targets = new Map<string, string>();
  const present = new Set(tracked);
  const problems: string[] = [];
  for (const file of tracked) {
    const to = mapPath(file, moves);
    if (to === file) continue;
    if (mapPath(to, moves) !== to) problems.push(`${file} → ${to}, which the map moves again to ${mapPath(to, moves)}`);
    if (present.has(to)) problems.push(`${file} → ${to}, which already exists`);
    const other = targets.get(to);
    if (other) problems.push(`${other} and ${file} both → ${to}`);
    targets.set(to, file);
    plan.set(file, to);
  }
  if (problems.length > 0) throw new Error(`the move map cannot be applied:\n  ${problems.join('\n  ')}`);
  return plan;
}

/** The directory of a repository path, `''` for the root. */
export const dirOf = (p: string): string => (path.posix.dirname(p) === '.' ? '' : path.posix.dirname(p));

/** `to` relative to the directory `fromDir`, written the way the code base writes relative paths (`./x`, `../x`). */
export function relativeFrom(fromDir: string, to: string): string {
  const rel = path.posix.relative(fromDir || '.', to);
  return rel.startsWith('.') ? rel : `./${rel}`;
}
