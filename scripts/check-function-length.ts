/**
 * Lists the product's functions (declarations, arrows, function expressions, methods,
 * constructors, accessors) whose text spans more than MAX_LINES lines, so "every function fits
 * on a screen" is a command anyone can run (`npm run fn-length`). A nested function counts
 * inside its parent too: a factory whose closures add up to a long text is long.
 *
 * TypeScript 7's compiler is a native binary; its JavaScript API (`typescript/unstable/sync`)
 * talks to it over a pipe. The script opens a project made only of the product's files with
 * imports left unresolved, so the compiler parses them and does nothing else.
 *
 * `--check` exits 1 when any function is too long; without it the script only lists.
 */
import { statSync } from 'node:fs';
import path from 'node:path';
import { API } from 'typescript/unstable/sync';
import { SyntaxKind, type Node, type SourceFile } from 'typescript/unstable/ast';
import { listSourceFiles } from './source-files.ts';

const MAX_LINES = 50;
const ROOTS = ['functions', 'sandbox-runner', 'local', 'infra', 'scripts', 'bench'];

const FUNCTION_KINDS = new Set<SyntaxKind>([
  SyntaxKind.FunctionDeclaration,
  SyntaxKind.FunctionExpression,
  SyntaxKind.ArrowFunction,
  SyntaxKind.MethodDeclaration,
  SyntaxKind.Constructor,
  SyntaxKind.GetAccessor,
  SyntaxKind.SetAccessor,
]);

export interface LongFunction {
  file: string;
  line: number;
  name: string;
  lines: number;
}

function nameOf(node: Node, file: SourceFile): string {
  const own = (node as { name?: Node }).name;
  if (own) return own.getText(file);
  const parent = node.parent as Node & { name?: Node };
  if (node.kind === SyntaxKind.Constructor) return `${parent.name?.getText(file) ?? '(class)'} constructor`;
  if (parent.name && parent.kind !== SyntaxKind.CallExpression) return parent.name.getText(file);
  return '(anonymous)';
}

function longFunctionsIn(file: SourceFile, rel: string): LongFunction[] {
  const found: LongFunction[] = [];
  const lineOf = (pos: number) => file.getLineAndCharacterOfPosition(pos).line;
  const visit = (node: Node): void => {
    if (FUNCTION_KINDS.has(node.kind)) {
      const start = lineOf(node.getStart(file));
      const lines = lineOf(node.end) - start + 1;
      if (lines > MAX_LINES) found.push({ file: rel, line: start + 1, name: nameOf(node, file), lines });
    }
    node.forEachChild(visit);
  };
  file.forEachChild(visit);
  return found;
}

export function findLongFunctions(root: string): LongFunction[] {
  const files = ROOTS.flatMap((top) => {
    const dir = path.join(root, top);
    return statSync(dir, { throwIfNoEntry: false })?.isDirectory() ? listSourceFiles(dir) : [];
  });
  const configPath = path.join(root, '.fn-length.tsconfig.json');
  const config = JSON.stringify({
    compilerOptions: { noResolve: true, noLib: true, types: [], allowImportingTsExtensions: true, noEmit: true },
    files,
  });
  const api = new API({
    cwd: root,
    fs: {
      readFile: (name) => (name === configPath ? config : undefined),
      fileExists: (name) => (name === configPath ? true : undefined),
    },
  });
  try {
    const project = api.updateSnapshot({ openProject: configPath }).getProjects()[0]!;
    return files.flatMap((full) => {
      const file = project.program.getSourceFile(full);
      if (!file) throw new Error(`the compiler did not parse ${full}`);
      return longFunctionsIn(file, path.relative(root, full).split(path.sep).join('/'));
    });
  } finally {
    api.close();
  }
}

function main(): void {
  const root = path.resolve(import.meta.dirname, '..');
  const long = findLongFunctions(root).sort((a, b) => b.lines - a.lines);
  for (const f of long) console.log(`${String(f.lines).padStart(4)}  ${f.file}:${f.line}  ${f.name}`);
  console.log(`fn-length: ${long.length} function(s) over ${MAX_LINES} lines`);
  if (process.argv.includes('--check') && long.length > 0) process.exit(1);
}

main();
