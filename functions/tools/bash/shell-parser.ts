import { createRequire } from 'node:module';
import { Language, Parser, type Node } from 'web-tree-sitter';

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
    await Parser.init();
    const language = await Language.load(require.resolve('tree-sitter-bash/tree-sitter-bash.wasm'));
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
