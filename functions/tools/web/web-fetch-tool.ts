import { z } from 'zod';
import { buildTool, ToolError } from '../tool.ts';
import { readPage } from './page-reader.ts';
import { createPageCache } from './page-cache.ts';
import { fetchPage, type RedirectNotice } from './web-page.ts';

export const WEB_FETCH_TOOL_NAME = 'WebFetch';

const inputSchema = z.strictObject({
  url: z.string().url().describe('The URL to fetch content from'),
  prompt: z.string().describe('The prompt to run on the fetched content'),
});

export interface WebFetchOutput {
  bytes: number;
  code: number;
  codeText: string;
  /** What the reader model answered, or the redirect notice. */
  result: string;
  durationMs: number;
  url: string;
}

const DESCRIPTION = [
  'Fetches a web page and answers a prompt about it: the page (HTML turned into Markdown) is read by a model with your `prompt`, and you get its answer.',
  '- `url` must be a complete URL; http:// is upgraded to https://. Pages behind a login (private documents, issue trackers, dashboards) cannot be read: look for an MCP tool that has access instead.',
  '- Only the domains this session may reach over the network (its allowed network domains) can be fetched; a refusal says why.',
  '- Say in `prompt` what you want from the page. Long pages are cut at 100,000 characters before they are read.',
  '- A redirect to another host is not followed: you are told the new URL and can call WebFetch again with it.',
  '- It changes nothing in the workspace. For GitHub, prefer `gh` through Bash when it is available.',
].join('\n');

/** How a redirect status reads in the notice. */
function redirectStatusText(status: number): string {
  if (status === 301) return 'Moved Permanently';
  if (status === 308) return 'Permanent Redirect';
  if (status === 307) return 'Temporary Redirect';
  return 'Found';
}

/** The notice the model gets instead of a page that lives on another host (its text as the reference words it). */
export function redirectNoticeText(notice: RedirectNotice, prompt: string): string {
  return `REDIRECT DETECTED: The URL redirects to a different host.

Original URL: ${notice.originalUrl}
Redirect URL: ${notice.redirectUrl}
Status: ${notice.statusCode} ${redirectStatusText(notice.statusCode)}

To complete your request, I need to fetch content from the redirected URL. Please use WebFetch again with these parameters:
- url: "${notice.redirectUrl}"
- prompt: "${prompt}"`;
}

/** This instance's fetched pages, per session (the reference's 15-minute cache). */
const pages = createPageCache();

export const webFetchTool = buildTool({
  name: WEB_FETCH_TOOL_NAME,
  inputSchema,
  description: DESCRIPTION,
  maxResultSizeChars: 100_000,
  searchHint: 'fetch and extract content from a URL',
  // Reads only, so it may run beside other reads; it reaches outside the session, so it is not
  // "read-only" for permissions: each domain is asked about (rules `WebFetch(domain:HOST)`).
  isConcurrencySafe: () => true,
  async validateInput(input) {
    if (!URL.canParse(input.url)) return { ok: false, message: `Error: Invalid URL "${input.url}". The URL provided could not be parsed.` };
    return { ok: true };
  },
  async call(input, ctx) {
    if (!ctx.web || !ctx.sideModel) throw new ToolError('WebFetch is not available to this agent: it has no network access or no model to read pages with.');
    const startedAt = Date.now();
    // Keyed by the URL as the model wrote it, as the reference keys it; redirect notices are not kept.
    const cached = pages.get(ctx.sessionId, input.url);
    const fetched = cached ?? (await fetchPage(input.url, ctx.web, ctx.signal));
    if (fetched.kind === 'page' && !cached) pages.set(ctx.sessionId, input.url, fetched);
    if (fetched.kind === 'redirect') {
      const result = redirectNoticeText(fetched, input.prompt);
      const codeText = redirectStatusText(fetched.statusCode);
      return { data: { bytes: Buffer.byteLength(result), code: fetched.statusCode, codeText, result, durationMs: Date.now() - startedAt, url: input.url } };
    }
    const result = await readPage(ctx.sideModel, fetched.content, input.prompt, ctx.signal);
    return { data: { bytes: fetched.bytes, code: fetched.code, codeText: fetched.codeText, result, durationMs: Date.now() - startedAt, url: input.url } };
  },
  mapToolResultToToolResultBlockParam(output: WebFetchOutput, toolUseId) {
    return { type: 'tool_result', tool_use_id: toolUseId, content: output.result };
  },
});
