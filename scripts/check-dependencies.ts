/**
 * The import graph of the product's own files, checked against dependency-rules.json: no file
 * cycles, no cycles between folders, no forbidden edges. Type-only imports count. Prints the
 * folder graph (`--graph`) so a reader sees the architecture's layering in one screen. Packages
 * (or paths inside packages) listed under `loadLazily` may be reached from the matching files
 * only through `import type` and dynamic `import()` (docs/deploy.md, "Cold start and bundle size").
 *
 * The code base writes every relative import with its `.ts` extension and uses no dynamic
 * imports of its own files, so reading `import … from '…'` / `export … from '…'` statements is
 * enough to build the exact graph (the TypeScript 7 compiler in use has no JavaScript API for
 * the usual graph tools to call).
 */
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { listSourceFiles } from './source-files.ts';

interface Rules {
  roots: string[];
  forbidFileCycles: boolean;
  forbidFolderCycles: boolean;
  forbidden: { from: string; to: string; why: string }[];
  loadLazily?: { from: string; packages: string[]; why: string }[];
}

const IMPORT = /(?:^|[\n;])\s*(?:import|export)\s(?:[^'";]*?\sfrom\s)?\s*['"]([^'"]+)['"]/g;

export function importsOf(source: string): string[] {
  const found: string[] = [];
  for (const m of source.matchAll(IMPORT)) found.push(m[1]!);
  return found;
}

/** Specifiers of the static imports and re-exports that load code: `import type` / `export type` left out. */
export function valueImportsOf(source: string): string[] {
  const found: string[] = [];
  for (const m of source.matchAll(IMPORT)) if (!/^[\n;]?\s*(?:import|export)\s+type\s/.test(m[0])) found.push(m[1]!);
  return found;
}

/** The npm package a bare specifier names (`@scope/name/sub` → `@scope/name`); undefined for relative paths and node builtins. */
export function packageOf(spec: string): string | undefined {
  if (spec.startsWith('.') || spec.startsWith('node:')) return undefined;
  const parts = spec.split('/');
  return spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/** Static value imports of packages that must be loaded lazily, from the files a rule covers. */
export function eagerImports(root: string, rules: Rules): string[] {
  const problems: string[] = [];
  for (const rule of rules.loadLazily ?? []) {
    for (const top of rules.roots) {
      const dir = path.join(root, top);
      if (!statSync(dir, { throwIfNoEntry: false })?.isDirectory()) continue;
      for (const file of listSourceFiles(dir)) {
        const rel = path.relative(root, file).split(path.sep).join('/');
        if (!new RegExp(rule.from).test(rel)) continue;
        for (const spec of valueImportsOf(readFileSync(file, 'utf8'))) {
          // An entry is a package (every path in it) or a path inside one (`pkg/sub` and below).
          if (packageOf(spec) && rule.packages.some((p) => spec === p || spec.startsWith(`${p}/`)))
            problems.push(`${rel} imports ${spec} statically: ${rule.why}`);
        }
      }
    }
  }
  return problems;
}

export function buildGraph(root: string, roots: string[]): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const top of roots) {
    const dir = path.join(root, top);
    if (!statSync(dir, { throwIfNoEntry: false })?.isDirectory()) continue;
    for (const file of listSourceFiles(dir)) {
      const rel = path.relative(root, file).split(path.sep).join('/');
      const targets = importsOf(readFileSync(file, 'utf8'))
        .filter((spec) => spec.startsWith('.'))
        .map((spec) => path.posix.normalize(path.posix.join(path.posix.dirname(rel), spec)));
      graph.set(rel, [...new Set(targets)]);
    }
  }
  return graph;
}

export const folderOf = (file: string): string => {
  const parts = file.split('/');
  return parts.length > 2 ? parts.slice(0, 2).join('/') : parts[0]!;
};

/** Strongly connected components with more than one member (or a self-loop): Tarjan's algorithm. */
export function cycles(graph: Map<string, Iterable<string>>): string[][] {
  let index = 0;
  const indices = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    indices.set(v, index);
    low.set(v, index++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!indices.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, indices.get(w)!));
    }
    if (low.get(v) === indices.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      const selfLoop = [...(graph.get(v) ?? [])].includes(v);
      if (component.length > 1 || selfLoop) found.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!indices.has(v)) visit(v);
  return found;
}

export function folderGraph(graph: Map<string, string[]>): Map<string, Set<string>> {
  const folders = new Map<string, Set<string>>();
  for (const [file, targets] of graph) {
    const from = folderOf(file);
    if (!folders.has(from)) folders.set(from, new Set());
    for (const t of targets) if (folderOf(t) !== from) folders.get(from)!.add(folderOf(t));
  }
  return folders;
}

export function check(root: string, rules: Rules): { problems: string[]; folders: Map<string, Set<string>> } {
  const graph = buildGraph(root, rules.roots);
  const problems: string[] = [];
  for (const [file, targets] of graph) {
    for (const t of targets) {
      if (!graph.has(t) && !statSync(path.join(root, t), { throwIfNoEntry: false })) problems.push(`${file} imports ${t}, which does not exist`);
      for (const rule of rules.forbidden) {
        if (new RegExp(rule.from).test(file) && new RegExp(rule.to).test(t)) problems.push(`${file} → ${t}: ${rule.why}`);
      }
    }
  }
  problems.push(...eagerImports(root, rules));
  if (rules.forbidFileCycles) for (const c of cycles(graph)) problems.push(`file cycle: ${c.join(' ↔ ')}`);
  const folders = folderGraph(graph);
  if (rules.forbidFolderCycles) for (const c of cycles(folders)) problems.push(`folder cycle: ${c.join(' ↔ ')}`);
  return { problems, folders };
}

const isMain = process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename);
if (isMain) {
  const root = process.cwd();
  const rules = JSON.parse(readFileSync(path.join(root, 'dependency-rules.json'), 'utf8')) as Rules;
  const { problems, folders } = check(root, rules);
  if (process.argv.includes('--graph')) {
    for (const [from, to] of [...folders].sort(([a], [b]) => a.localeCompare(b))) console.log(`${from} → ${[...to].sort().join(', ') || '(nothing)'}`);
  }
  if (problems.length > 0) {
    console.error(`dependency check: ${problems.length} problem(s)\n${problems.map((p) => `  ${p}`).join('\n')}`);
    process.exit(1);
  }
  console.log('dependency check: no cycles, no forbidden imports, no eager imports of lazy packages');
}
