/**
 * The rewrites applied to Edit and Write inputs before they are validated or written
 * (docs/tools.md, "Edit and Write: what is normalised before writing"; observed with `npm run parity-reference`, cases in scripts/parity-cases/*-normalise.json).
 * They change file bytes, so Stratus applies them the same way; docs/tools.md says why each exists.
 */

/** Markdown keeps trailing whitespace: two trailing spaces are a line break there. */
export function keepsTrailingWhitespace(filePath: string): boolean {
  return /\.(md|mdx)$/i.test(filePath);
}

/**
 * Removes trailing whitespace from every line, keeping each line's terminator (`\r\n`, `\n` or a
 * lone `\r`) as it was. "Whitespace" is JavaScript's: it includes NBSP, U+3000 and U+FEFF.
 * trimEnd per line is linear, where a `\s+$` regex is quadratic on long runs of blanks.
 */
export function stripTrailingWhitespace(text: string): string {
  return text
    .split(/(\r\n|\n|\r)/)
    .map((part, i) => (i % 2 === 0 ? part.trimEnd() : part))
    .join('');
}

/**
 * Tags and markers that reach tools in a shortened or spaced-out form (the model's output is
 * sanitised so it cannot emit the real ones verbatim), each with the text files actually hold.
 * Order matters: they are tried in this order, and the ones that changed old_string are replayed
 * on new_string in the same order.
 */
const SANITISED_FORMS: ReadonlyArray<readonly [string, string]> = [
  ['<fnr>', '<function_results>'],
  ['<n>', '<name>'],
  ['</n>', '</name>'],
  ['<o>', '<output>'],
  ['</o>', '</output>'],
  ['<e>', '<error>'],
  ['</e>', '</error>'],
  ['<s>', '<system>'],
  ['</s>', '</system>'],
  ['<r>', '<result>'],
  ['</r>', '</result>'],
  ['< META_START >', '<META_START>'],
  ['< META_END >', '<META_END>'],
  ['< EOT >', '<EOT>'],
  ['< META >', '<META>'],
  ['< SOS >', '<SOS>'],
  ['\n\nH:', '\n\nHuman:'],
  ['\n\nA:', '\n\nAssistant:'],
];

/** `text` with every sanitised form turned back, and the pairs that changed something. */
export function desanitise(text: string): { text: string; applied: Array<readonly [string, string]> } {
  let out = text;
  const applied: Array<readonly [string, string]> = [];
  for (const pair of SANITISED_FORMS) {
    const next = out.replaceAll(pair[0], pair[1]);
    if (next !== out) applied.push(pair);
    out = next;
  }
  return { text: out, applied };
}

export interface EditStrings {
  oldString: string;
  newString: string;
}

/**
 * Edit's strings as they are applied. `fileContent` is the file's text (CRLF as LF), or
 * undefined when the file cannot be read (missing, a directory, outside the workspace): then the
 * input stays exactly as given, so an Edit that creates a file writes new_string untouched.
 * Otherwise new_string loses trailing whitespace (not in Markdown), and an old_string that is
 * not in the file but is once de-sanitised is used de-sanitised, with the same replacements
 * made in new_string.
 */
export function normaliseEditStrings(filePath: string, input: EditStrings, fileContent: string | undefined): EditStrings {
  if (fileContent === undefined) return input;
  const newString = keepsTrailingWhitespace(filePath) ? input.newString : stripTrailingWhitespace(input.newString);
  if (fileContent.includes(input.oldString)) return { oldString: input.oldString, newString };
  const restored = desanitise(input.oldString);
  if (!fileContent.includes(restored.text)) return { oldString: input.oldString, newString };
  let replacement = newString;
  for (const [from, to] of restored.applied) replacement = replacement.replaceAll(from, to);
  return { oldString: restored.text, newString: replacement };
}

/** Write's content as it is written: trailing whitespace stripped except in Markdown. */
export function normaliseWriteContent(filePath: string, content: string): string {
  return keepsTrailingWhitespace(filePath) ? content : stripTrailingWhitespace(content);
}

/**
 * Replaces `search` (already the file's own spelling of old_string) with `replacement`. Deleting
 * (an empty replacement) also takes the newline after `search` when `search` does not end in one
 * and the file has `search` followed by one, so removing a line leaves no blank line. With
 * replace_all only the occurrences followed by a newline are then removed.
 */
export function applyReplacement(content: string, search: string, replacement: string, replaceAll: boolean): string {
  const target = replacement === '' && !search.endsWith('\n') && content.includes(`${search}\n`) ? `${search}\n` : search;
  return replaceAll ? content.split(target).join(replacement) : content.replace(target, () => replacement);
}
