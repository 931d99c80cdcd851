/**
 * The `@path` imports an instructions file (CLAUDE.md, AGENTS.md) names, in the order they
 * appear: an `@` at the start of a line or after whitespace, up to the next whitespace (a
 * backslash-escaped space stays in the path). Mentions inside fenced code blocks and inline code
 * spans are text, not imports. A trailing sentence mark is part of the path as written, so
 * `see @a.md.` names `a.md.` (which usually does not exist and is skipped). docs/context.md,
 * "Instructions files", records the rules.
 */
export function importPaths(text: string): string[] {
  const found: string[] = [];
  let fence: string | undefined;
  for (const line of text.split('\n')) {
    const marker = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence !== undefined) {
      if (marker !== undefined && marker[0] === fence[0] && marker.length >= fence.length) fence = undefined;
      continue;
    }
    if (marker !== undefined) {
      fence = marker;
      continue;
    }
    for (const match of withoutCodeSpans(line).matchAll(/(?:^|\s)@((?:[^\s\\]|\\ )+)/g)) {
      const raw = match[1]!.replaceAll('\\ ', ' ');
      if (raw.startsWith('@')) continue;
      found.push(raw);
    }
  }
  return found;
}

/** The line with every `code span` blanked, so an `@` inside one is not an import. */
function withoutCodeSpans(line: string): string {
  return line.replace(/(`+)[^`]*?\1/g, (span) => ' '.repeat(span.length));
}
