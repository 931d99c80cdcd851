import path from 'node:path';
import { API } from 'typescript/unstable/sync';

/** One module specifier in a file: the string literal's range (quotes included) and its value. */
export interface Specifier {
  start: number;
  end: number;
  value: string;
}

/** What the compiler's source file lists as its module references (`SourceFile.imports`). */
interface ModuleReference {
  text: string;
  end: number;
}

/**
 * Every module specifier of every file, as the TypeScript compiler finds them: `import` and
 * `export … from` (type-only ones too), `import x = require()`, dynamic `import()` and `import('…')`
 * types. The compiler (TypeScript 7, through its API process) parses each file in the project
 * that owns it (tsconfig.json, console/tsconfig.json) or an inferred one (`.mjs`), so comments,
 * template strings and look-alike text are never mistaken for imports.
 */
export function findSpecifiers(root: string, files: readonly string[], read: (file: string) => string): Map<string, Specifier[]> {
  const api = new API({ cwd: root });
  try {
    const absolute = files.map((f) => path.join(root, f));
    const snapshot = api.updateSnapshot({ openFiles: absolute });
    const found = new Map<string, Specifier[]>();
    files.forEach((file, i) => {
      const source = snapshot.getDefaultProjectForFile(absolute[i]!)?.program.getSourceFile(absolute[i]!);
      if (!source) throw new Error(`the TypeScript compiler did not load ${file}`);
      const references = (source as unknown as { imports?: readonly ModuleReference[] }).imports ?? [];
      found.set(file, references.map((ref) => locate(file, read(file), ref)));
    });
    return found;
  } finally {
    api.close();
  }
}

/** The literal's own range: the compiler's node starts at its leading trivia, so count back from its end. */
function locate(file: string, text: string, ref: ModuleReference): Specifier {
  const start = ref.end - ref.text.length - 2;
  const quote = text[start];
  if ((quote !== "'" && quote !== '"' && quote !== '`') || text.slice(start + 1, ref.end - 1) !== ref.text || text[ref.end - 1] !== quote) {
    throw new Error(`${file}: cannot find the specifier '${ref.text}' ending at ${ref.end} (escaped characters in a specifier are not handled)`);
  }
  return { start, end: ref.end, value: ref.text };
}
