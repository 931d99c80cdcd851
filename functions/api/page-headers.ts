/**
 * The headers of every page the API serves to a browser (the console, the /docs reference):
 * the page's CSP, no MIME sniffing (a file is only ever what its type says), no framing by
 * another site (clickjacking), and no Referer carrying a URL elsewhere.
 */
export function pageHeaders(csp: string, cacheControl: string): Record<string, string> {
  return {
    'cache-control': cacheControl,
    'content-security-policy': csp,
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
  };
}
