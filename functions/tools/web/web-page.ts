import { STATUS_CODES } from 'node:http';
import type { WebAccess } from '../tool.ts';
import { htmlToMarkdown } from './html-to-markdown.ts';

/** Longest URL WebFetch takes. */
export const MAX_URL_LENGTH = 2000;
/** Redirects within one host followed before giving up. */
export const MAX_REDIRECTS = 10;
/** How long one page may take to arrive. */
export const FETCH_TIMEOUT_MS = 60_000;

const REDIRECT_STATUSES = new Set([301, 302, 307, 308]);
const ACCEPT = 'text/markdown, text/html, */*';
const USER_AGENT = 'Stratus-WebFetch/1.0 (a coding agent fetching a page its model asked for)';

/** A page as the model's reader gets it: HTML turned into Markdown, any other text as it is. */
export interface FetchedPage {
  kind: 'page';
  bytes: number;
  code: number;
  codeText: string;
  content: string;
  contentType: string;
}

/** A redirect to another host: not followed, reported to the model so it can decide to fetch there. */
export interface RedirectNotice {
  kind: 'redirect';
  originalUrl: string;
  redirectUrl: string;
  statusCode: number;
}

/**
 * Whether WebFetch takes the URL at all: at most 2,000 characters, parseable, no user name or
 * password (a fetch never carries credentials), and a host with at least two labels.
 */
export function isFetchableUrl(text: string): boolean {
  if (text.length > MAX_URL_LENGTH || !URL.canParse(text)) return false;
  const url = new URL(text);
  if (url.username || url.password) return false;
  return url.hostname.split('.').length >= 2;
}

/**
 * Fetches the page at `text` through the session's web access: `http://` is upgraded to
 * `https://` unless the operator lets plain http reach that host; redirects within the host
 * (`www.` aside, same scheme and port) are followed, up to MAX_REDIRECTS; a redirect elsewhere
 * is returned as a notice. Failures throw the sentence the model reads.
 */
export async function fetchPage(text: string, web: WebAccess, signal: AbortSignal): Promise<FetchedPage | RedirectNotice> {
  if (!isFetchableUrl(text)) throw new Error('Invalid URL');
  const url = new URL(text);
  if (url.protocol === 'http:' && !web.plainHttpAllowed(url)) url.protocol = 'https:';
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error(`Unsupported protocol ${url.protocol}`);
  const timeout = AbortSignal.any([signal, AbortSignal.timeout(FETCH_TIMEOUT_MS)]);
  return fetchFollowing(url.href, web, timeout, 0);
}

async function fetchFollowing(href: string, web: WebAccess, signal: AbortSignal, hops: number): Promise<FetchedPage | RedirectNotice> {
  if (hops > MAX_REDIRECTS) throw new Error(`Too many redirects (exceeded ${MAX_REDIRECTS})`);
  const res = await web.get(new URL(href), { headers: { accept: ACCEPT, 'user-agent': USER_AGENT }, signal });
  if (REDIRECT_STATUSES.has(res.status)) {
    await res.body?.cancel();
    const location = res.headers.get('location');
    if (!location) throw new Error('Redirect missing Location header');
    const next = new URL(location, href).toString();
    if (isPermittedRedirect(href, next)) return fetchFollowing(next, web, signal, hops + 1);
    return { kind: 'redirect', originalUrl: href, redirectUrl: next, statusCode: res.status };
  }
  if (res.status < 200 || res.status > 299) {
    await res.body?.cancel();
    throw new Error(`Request failed with status code ${res.status}`);
  }
  return readPage(res);
}

/** Same scheme, port and host (a leading `www.` aside), no credentials: a redirect that stays where the model asked to go. */
export function isPermittedRedirect(from: string, to: string): boolean {
  const a = new URL(from);
  const b = new URL(to);
  if (a.protocol !== b.protocol || a.port !== b.port || b.username || b.password) return false;
  const bare = (host: string) => host.replace(/^www\./, '');
  return bare(a.hostname) === bare(b.hostname);
}

async function readPage(res: Response): Promise<FetchedPage> {
  const raw = Buffer.from(await res.arrayBuffer());
  const contentType = res.headers.get('content-type') ?? '';
  const text = raw.toString('utf8');
  const content = contentType.includes('text/html') ? await htmlToMarkdown(text) : text;
  return { kind: 'page', bytes: raw.length, code: res.status, codeText: STATUS_CODES[res.status] ?? '', content, contentType };
}
