import { checkHostPort, parseAllowList } from '../../sandbox-runner/common/network-allow-list.ts';
import { createOutboundFetch } from '../outbound/outbound-fetch.ts';
import type { OutboundPolicy } from '../outbound/outbound-policy.ts';
import type { WebAccess } from '../tools/tool.ts';
import type { TurnConfig } from './turn-deps.ts';

/** Bytes of one page WebFetch reads; past it the read fails naming the limit. */
export const MAX_PAGE_BYTES = 10 * 1024 * 1024;

/** What a refused fetch answers in a deployment whose sessions have no network (STRATUS_EGRESS=none). */
export function noEgressText(host: string): string {
  return `Cannot fetch ${host}: this Stratus deployment gives sessions no network access (STRATUS_EGRESS=none), so no web page can be fetched. Work from what the workspace holds, or ask the user for the page's content.`;
}

/**
 * A destination outside the session's allowed network domains: the reference's shape for a
 * request its egress proxy blocked, with the reason and the setting that would allow it.
 */
export function egressBlockedText(host: string, port: number, reason: 'host' | 'port'): string {
  const why =
    reason === 'host'
      ? `${host} is not in this session's allowed network domains (settings.allowedDomains)`
      : `port ${port} of ${host} is not allowed; only 80 and 443 are, unless an allowed network domain names the port (${host}:${port})`;
  return JSON.stringify({ error_type: 'EGRESS_BLOCKED', domain: host, message: `Access to ${host} is blocked by the network egress proxy: ${why}.` });
}

/**
 * WebFetch's network, from the API side (docs/security.md, "Outbound calls from the API side"):
 * a destination must be one the session's commands may reach (its `allowedDomains`, by the
 * sandbox's own matcher), and then passes the one outbound policy of every API-side call
 * (public addresses only unless the operator allows, never the stack's own endpoints, the
 * checked address pinned, no redirect followed, answers bounded). Nothing is sent but the
 * URL and WebFetch's own headers: no cookie, token or credential of the deployment.
 */
export function createSessionWeb(
  deps: { outbound: OutboundPolicy; config: Pick<TurnConfig, 'egress'> },
  settings: { allowedDomains?: readonly string[] } | undefined,
): WebAccess {
  const entries = parseAllowList(settings?.allowedDomains ?? []);
  const fetch = createOutboundFetch(deps.outbound, { maxResponseBytes: MAX_PAGE_BYTES });
  return {
    plainHttpAllowed: (url) => deps.outbound.refusalOf(url.href) === undefined,
    async get(url, init) {
      const host = url.hostname.replace(/^\[|\]$/g, '');
      if (deps.config.egress === 'none') throw new Error(noEgressText(host));
      const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
      const decision = checkHostPort(host, port, entries);
      if (!decision.allowed) throw new Error(egressBlockedText(host, port, decision.reason));
      return fetch(url, { method: 'GET', headers: init.headers, signal: init.signal });
    },
  };
}
