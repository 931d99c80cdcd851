// The `turndown` package ships no types; this is the part of its API WebFetch uses (html-to-markdown.ts).
declare module 'turndown' {
  export default class TurndownService {
    constructor(options?: Record<string, unknown>);
    turndown(html: string): string;
  }
}
