import { nonPublicRange, parseAllowListEntry, type AllowListEntry } from '../../sandbox-runner/isolation/network-allow-list.ts';
import type { OwnEndpoints } from './own-endpoints.ts';
import { entryPorts, PRIVATE_NETWORK_ALLOW_SETTING, type PrivateNetworkAllow } from './private-network-allow.ts';

export const OWN_ENDPOINT = "it is one of this Stratus deployment's own endpoints, which nothing a session configures may call";

/**
 * Why a session may not list these `allowedDomains` entries. The sandbox's proxies honour a
 * listed IP address, for itself and for any listed name that resolves to it, so:
 * - a non-public IP literal needs the operator's permission (STRATUS_PRIVATE_NETWORK_ALLOW) at
 *   every port the entry opens;
 * - no entry, alone or with a listed address, may open one of the stack's own endpoints
 *   (`localhost:8000` beside `127.0.0.1` reaches 127.0.0.1:8000 through the proxy).
 * Names and public addresses are otherwise the proxies' to judge when resolved.
 */
export function allowedDomainsRefusals(texts: readonly string[], rules: { allow: PrivateNetworkAllow; own: OwnEndpoints }): string[] {
  const entries = texts.flatMap((text) => {
    const entry = parseAllowListEntry(text);
    return entry ? [{ text, entry }] : [];
  });
  const listed = entries.filter(({ entry }) => entry.kind === 'ip');
  return entries.flatMap(({ text, entry }) => {
    const refusal = entry.kind === 'ip' ? ipEntryRefusal(text, entry, rules) : nameEntryRefusal(text, entry, listed, rules.own);
    return refusal ? [refusal] : [];
  });
}

function ipEntryRefusal(text: string, entry: AllowListEntry, rules: { allow: PrivateNetworkAllow; own: OwnEndpoints }): string | undefined {
  const range = nonPublicRange(entry.host);
  for (const port of entryPorts(entry)) {
    if (rules.own.includes(entry.host, entry.host, port)) return `"${text}" reaches ${entry.host}:${port}: ${OWN_ENDPOINT}`;
    if (range && !rules.allow.coversAddress(entry.host, port)) {
      return `"${text}" is a ${range} address; a session may list one only when ${PRIVATE_NETWORK_ALLOW_SETTING} allows it (at port ${port})`;
    }
  }
  return undefined;
}

function nameEntryRefusal(text: string, entry: AllowListEntry, listed: readonly { text: string; entry: AllowListEntry }[], own: OwnEndpoints): string | undefined {
  for (const port of entryPorts(entry)) {
    for (const address of listed) {
      if (own.includes(entry.host, address.entry.host, port)) return `"${text}" with "${address.text}" listed reaches ${address.entry.host}:${port}: ${OWN_ENDPOINT}`;
    }
  }
  return undefined;
}
