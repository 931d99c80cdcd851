import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { findSpecifiers } from './module-specifiers.ts';
import { planMoves, withMirroredTests, type MoveMap } from './plan.ts';
import { applyEdits, mentionEdits, specifierEdits } from './rewrite.ts';

const CODE = /\.(ts|tsx|mts|cts|mjs|cjs|js)$/;
/** Files whose paths are rewritten where they are mentioned: code, docs and configuration. */
const TEXT = /\.(ts|tsx|mts|cts|mjs|cjs|js|md|json|jsonc|ya?ml|sh)$/;

interface ApplyOptions {
  /** Files neither moved by rules nor rewritten: the map itself names the old paths on purpose. */
  leave?: (file: string) => boolean;
  /** Work out and report the moves and rewrites, change nothing. */
  dryRun?: boolean;
}

interface Outcome {
  moved: [from: string, to: string][];
  /** Files (at their new paths) whose text changed. */
  edited: string[];
}

const git = (root: string, ...args: string[]): string => execFileSync('git', args, { cwd: root, encoding: 'utf8' });

/** The files git tracks (its index: a file `git mv` moved counts at its new place), that exist. */
export function trackedFiles(root: string): string[] {
  return git(root, 'ls-files', '-z').split('\0').filter((f) => f && existsSync(path.join(root, f)));
}

/** Every file's new text (keyed by its old path) where a module specifier or a mentioned path changes. */
function newContents(root: string, files: readonly string[], moves: MoveMap): Map<string, string> {
  const tracked = new Set(files);
  const read = (f: string): string => readFileSync(path.join(root, f), 'utf8');
  const roots = [...new Set(files.filter((f) => f.includes('/') && !f.startsWith('.')).map((f) => f.split('/')[0]!))];
  const folders = new Set(files.flatMap((f) => f.split('/').slice(0, -1).map((_, i, parts) => parts.slice(0, i + 1).join('/'))));
  const exists = (p: string): boolean => tracked.has(p.replace(/\/$/, '')) || folders.has(p.replace(/\/$/, ''));
  const specifiers = findSpecifiers(root, files.filter((f) => CODE.test(f)), read);
  const changed = new Map<string, string>();
  for (const file of files) {
    if (!TEXT.test(file)) continue;
    const text = read(file);
    const specs = specifiers.get(file) ?? [];
    const edits = [...specifierEdits(file, text, specs, tracked, moves), ...mentionEdits(file, text, roots, moves, exists, specs)];
    const next = applyEdits(text, edits);
    if (next !== text) changed.set(file, next);
  }
  return changed;
}

/**
 * Moves the files the map names (`git mv`, so history follows them) and rewrites every relative
 * import and every mention of a moved path in the repository to match. Everything is worked out
 * before anything changes, so a map that cannot be applied changes nothing; a second run finds
 * nothing to move and nothing to rewrite.
 */
export function applyMoves(root: string, map: MoveMap, options: ApplyOptions = {}): Outcome {
  const moves = withMirroredTests(map);
  const files = trackedFiles(root).filter((f) => !options.leave?.(f));
  const plan = planMoves(files, moves);
  const contents = newContents(root, files, moves);
  if (options.dryRun) return { moved: [...plan], edited: [...contents.keys()].map((f) => plan.get(f) ?? f) };
  for (const [from, to] of plan) {
    mkdirSync(path.dirname(path.join(root, to)), { recursive: true });
    git(root, 'mv', from, to);
  }
  const edited: string[] = [];
  for (const [file, text] of contents) {
    const at = plan.get(file) ?? file;
    writeFileSync(path.join(root, at), text);
    edited.push(at);
  }
  if (edited.length > 0) git(root, 'add', '--', ...edited);
  return { moved: [...plan], edited };
}
