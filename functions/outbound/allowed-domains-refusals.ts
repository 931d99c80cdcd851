import { nonPublicRange, parseAllowListEntry } from '../../sandbox-runner/common/network-allow-list.ts';
import { entryPorts, PRIVATE_NETWORK_ALLOW_SETTING, type PrivateNetworkAllow } from './private-network-allow.ts';

/**
 * Why a session may not list these `allowedDomains` entries: the sandbox's proxies honour a listed
 * IP address (for itself and for any listed name resolving to it), so a non-public IP literal
 * needs the operator's permission (STRATUS_PRIVATE_NETWORK_ALLOW) at every port the entry opens.
 * Names and public addresses are the proxies' to judge when resolved, and the proxies refuse the
 * stack's own services whatever is listed (docs/security.md, "What a sandbox can never reach").
 */
export function allowedDomainsRefusals(texts: readonly string[], allow: PrivateNetworkAllow): string[] {
  return texts.flatMap((text) => {
    const entry = parseAllowListEntry(text);
    const range = entry?.kind === 'ip' ? nonPublicRange(entry.host) : undefined;
    if (!entry || !range) return [];
    const port = entryPorts(entry).find((p) => !allow.coversAddress(entry.host, p));
    return port === undefined
      ? []
      : [`"${text}" is a ${range} address; a session may list one only when ${PRIVATE_NETWORK_ALLOW_SETTING} allows it (at port ${port})`];
  });
}
