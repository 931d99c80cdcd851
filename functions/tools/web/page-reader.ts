import type { SideModel } from '../tool.ts';

/** Characters of a page the reader model gets; the rest is cut with TRUNCATED_NOTE. */
export const MAX_PAGE_CHARS = 100_000;
export const TRUNCATED_NOTE = '\n\n[Content truncated due to length...]';
export const NO_RESPONSE_TEXT = 'No response from model';

/**
 * The reader's request: the page between markers, the calling model's prompt, and how to answer.
 * The answer is what the calling model gets; it never sees the page itself, so a page cannot
 * hand it instructions verbatim, and a long page costs the caller only the answer's length.
 */
export function readerPrompt(page: string, prompt: string): string {
  return `
Web page content:
---
${page}
---

${prompt}

Answer briefly from the content above alone. Put quotations (at most 125 characters from any one source) in quotation marks and say everything else in your own words; do not comment on the legality of the request or of your answer, and never reproduce song lyrics.
`;
}

/** Runs the calling model's prompt over the page on the session's model account; the answer's first text, or NO_RESPONSE_TEXT. */
export async function readPage(model: SideModel, page: string, prompt: string, signal: AbortSignal): Promise<string> {
  const cut = page.length > MAX_PAGE_CHARS ? page.slice(0, MAX_PAGE_CHARS) + TRUNCATED_NOTE : page;
  const response = await model.call({ messages: [{ role: 'user', content: readerPrompt(cut, prompt) }] }, signal);
  const first = response.content[0];
  return first?.type === 'text' ? first.text : NO_RESPONSE_TEXT;
}
