import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Node, Parser } from 'web-tree-sitter';

export type { Node as ShellNode };

let loading: Promise<Parser> | undefined;
let ready: Parser | undefined;

/**
 * The bash grammar (tree-sitter-bash compiled to wasm, run by web-tree-sitter): no native build,
 * loaded once per process (~50 ms) and then parsing synchronously.
 */
export function loadShellParser(): Promise<Parser> {
  loading ??= (async () => {
    const require = createRequire(import.meta.url);
    // A separate chunk of the Lambda bundle, off the import path (docs/deploy.md, "Cold start and bundle size").
    const { Language, Parser } = await import('web-tree-sitter');
    await Parser.init();
    const language = await Language.load(locateWasm('tree-sitter-bash.wasm', () => require.resolve('tree-sitter-bash/tree-sitter-bash.wasm')));
    const parser = new Parser();
    parser.setLanguage(language);
    ready = parser;
    return parser;
  })();
  return loading;
}

/** The parser if it has finished loading; callers that cannot wait treat "not yet" as unknown. */
export function shellParserIfReady(): Parser | undefined {
  return ready;
}

/**
 * A bundled Lambda ships the grammar beside the bundle (infra/constructs/bundle-options.ts copies it
 * there, as web-tree-sitter expects its own wasm beside its script); from source it comes from
 * node_modules.
 */
function locateWasm(name: string, fromPackage: () => string): string {
  const beside = path.join(path.dirname(fileURLToPath(import.meta.url)), name);
  return existsSync(beside) ? beside : fromPackage();
}
