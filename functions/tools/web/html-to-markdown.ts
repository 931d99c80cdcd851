import type TurndownService from 'turndown';

let service: Promise<TurndownService> | undefined;

/**
 * A page's HTML as Markdown, with turndown's default options (as the reference converts it).
 * Loaded on first use: only WebFetch needs it, and it brings its own DOM parser.
 */
export async function htmlToMarkdown(html: string): Promise<string> {
  service ??= import('turndown').then((m) => new m.default());
  return (await service).turndown(html);
}
