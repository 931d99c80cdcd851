import path from 'node:path';
import { dirOf, mapPath, relativeFrom, type MoveMap } from './plan.ts';
import type { Specifier } from './module-specifiers.ts';

/** Replace `text[start, end)` with `replacement`. */
export interface Edit {
  start: number;
  end: number;
  replacement: string;
}

/** The edits applied to `text`, none overlapping (a later edit that overlaps an earlier one is dropped). */
export function applyEdits(text: string, edits: readonly Edit[]): string {
  let out = '';
  let at = 0;
  for (const edit of [...edits].sort((a, b) => a.start - b.start)) {
    if (edit.start < at) continue;
    out += text.slice(at, edit.start) + edit.replacement;
    at = edit.end;
  }
  return out + text.slice(at);
}

/** Suffixes a specifier may leave out of the file it names (`./x` for `./x.ts`, `./dir` for `./dir/index.ts`). */
const IMPLIED = ['', '.ts', '.tsx', '.mts', '.d.ts', '/index.ts', '/index.tsx'];

/** Where the file or folder an import names (`target`, a repository path as written) lives after the moves. */
function mapTarget(target: string, tracked: ReadonlySet<string>, moves: MoveMap): string {
  for (const suffix of IMPLIED) {
    if (!tracked.has(target + suffix)) continue;
    const moved = mapPath(target + suffix, moves);
    if (moved.endsWith(suffix)) return moved.slice(0, moved.length - suffix.length);
  }
  // `./x.js` naming `x.ts`, as NodeNext resolution allows.
  const asTs = target.replace(/\.js$/, '.ts');
  if (asTs !== target && tracked.has(asTs)) return mapPath(asTs, moves).replace(/\.ts$/, '.js');
  return mapPath(target, moves);
}

/** `spec`, a relative path written in `file`, rewritten for where both the file and what it names end up; undefined if it stays as written. */
function movedRelative(file: string, spec: string, tracked: ReadonlySet<string>, moves: MoveMap): string | undefined {
  const target = path.posix.normalize(path.posix.join(dirOf(file), spec));
  const newTarget = mapTarget(target.replace(/\/$/, ''), tracked, moves);
  const newFile = mapPath(file, moves);
  if (newTarget === target.replace(/\/$/, '') && dirOf(newFile) === dirOf(file)) return undefined;
  const rel = relativeFrom(dirOf(newFile), newTarget);
  return spec.endsWith('/') ? `${rel}/` : rel;
}

/** Edits for a file's relative module specifiers (bare package names never move). */
export function specifierEdits(file: string, text: string, specifiers: readonly Specifier[], tracked: ReadonlySet<string>, moves: MoveMap): Edit[] {
  const edits: Edit[] = [];
  for (const s of specifiers) {
    if (!s.value.startsWith('./') && !s.value.startsWith('../')) continue;
    const next = movedRelative(file, s.value, tracked, moves);
    if (next !== undefined && next !== s.value) edits.push({ start: s.start + 1, end: s.end - 1, replacement: next });
  }
  return edits;
}

/**
 * A path written in prose, a comment, a string or a Markdown link: a relative one (`./turn.ts`,
 * `../functions/agent/turn.ts`, `new URL('./worker.ts', import.meta.url)`) or a repository path
 * (`functions/agent/turn.ts`, `test/functions/…`), ending before trailing punctuation.
 */
function mentionPattern(roots: readonly string[]): RegExp {
  const names = roots.map((r) => r.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&')).join('|');
  return new RegExp(`(?<![\\w@./-])(?:((?:\\.{1,2}/)+)([\\w.@/-]*[\\w/])|((?:${names})/(?:[\\w.@/-]*[\\w/])?))`, 'g');
}

/** What a mention is to read after the moves; undefined when it stays as written. */
function movedMention(file: string, newDir: string, m: RegExpMatchArray, exists: (p: string) => boolean, moves: MoveMap): string | undefined {
  const [, up, rest, rooted] = m as unknown as [string, string | undefined, string | undefined, string | undefined];
  if (rooted !== undefined) return mapPath(rooted, moves) === rooted ? undefined : mapPath(rooted, moves);
  const target = path.posix.normalize(path.posix.join(dirOf(file), up! + rest!));
  if (target.startsWith('../')) return undefined;
  const moved = mapPath(target, moves);
  // A relative path that names nothing the repository holds is left alone: it may mean anything.
  if (moved === target && (newDir === dirOf(file) || !exists(target))) return undefined;
  return relativeFrom(newDir, moved) + (rest!.endsWith('/') ? '/' : '');
}

/**
 * Edits for the paths a file mentions outside its module specifiers (`skip`): `functions/agent/turn.ts`
 * in a comment or a doc becomes the file's new path; a relative mention is resolved from the
 * mentioning file, then written relative to where that file ends up. `exists` says whether a
 * path is a tracked file or folder.
 */
export function mentionEdits(file: string, text: string, roots: readonly string[], moves: MoveMap, exists: (p: string) => boolean, skip: readonly Specifier[] = []): Edit[] {
  const edits: Edit[] = [];
  const newDir = dirOf(mapPath(file, moves));
  for (const m of text.matchAll(mentionPattern(roots))) {
    const start = m.index;
    const end = start + m[0].length;
    if (skip.some((s) => start < s.end && end > s.start)) continue;
    const written = movedMention(file, newDir, m, exists, moves);
    if (written !== undefined && written !== m[0]) edits.push({ start, end, replacement: written });
  }
  return edits;
}
