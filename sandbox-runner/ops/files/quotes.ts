const LEFT_DOUBLE = '\u201c';
const RIGHT_DOUBLE = '\u201d';
const LEFT_SINGLE = '\u2018';
const RIGHT_SINGLE = '\u2019';

/** Curly quotes as straight ones, character for character (lengths are kept). */
export function straightenQuotes(text: string): string {
  return text.replace(/[\u201c\u201d]/g, '"').replace(/[\u2018\u2019]/g, "'");
}

/**
 * The text in `content` that `search` means: itself if present, otherwise the span that matches
 * once curly quotes are straightened (models type straight quotes; documents often hold curly ones).
 */
export function findActualString(content: string, search: string): string | undefined {
  if (content.includes(search)) return search;
  const at = straightenQuotes(content).indexOf(straightenQuotes(search));
  return at === -1 ? undefined : content.slice(at, at + search.length);
}

/** When the match needed quote normalisation, gives the replacement the file's curly style. */
export function preserveQuoteStyle(search: string, actual: string, replacement: string): string {
  if (search === actual) return replacement;
  let out = replacement;
  if (actual.includes(LEFT_DOUBLE) || actual.includes(RIGHT_DOUBLE)) out = curl(out, '"', LEFT_DOUBLE, RIGHT_DOUBLE, false);
  if (actual.includes(LEFT_SINGLE) || actual.includes(RIGHT_SINGLE)) out = curl(out, "'", LEFT_SINGLE, RIGHT_SINGLE, true);
  return out;
}

function curl(text: string, straight: string, left: string, right: string, apostrophes: boolean): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch !== straight) {
      out += ch;
      continue;
    }
    const prev = i > 0 ? text[i - 1]! : '';
    const next = i + 1 < text.length ? text[i + 1]! : '';
    if (apostrophes && /\p{L}/u.test(prev) && /\p{L}/u.test(next)) out += right;
    else out += opensQuote(prev) ? left : right;
  }
  return out;
}

function opensQuote(prev: string): boolean {
  return prev === '' || /\s/.test(prev) || '([{\u2014\u2013'.includes(prev);
}
