/**
 * The one allow-list entry a clone may use: the URL's host and port. The harness signs the same
 * entry for the AWS egress proxy, so both sides must compute it alike.
 */
export function cloneAllowListEntry(cloneUrl: string): string | undefined {
  let url: URL;
  try {
    url = new URL(cloneUrl);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
  return `${url.hostname}:${url.port || (url.protocol === 'https:' ? 443 : 80)}`;
}
