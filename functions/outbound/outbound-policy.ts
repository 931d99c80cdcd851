import { lookup } from 'node:dns/promises';
import { canonicalIp, nonPublicRange } from '../../sandbox-runner/common/network-allow-list.ts';
import { allowedDomainsRefusals } from './allowed-domains-refusals.ts';
import { createOwnEndpoints, type OwnEndpoints } from './own-endpoints.ts';
import { createPrivateNetworkAllow, PRIVATE_NETWORK_ALLOW_SETTING, type PrivateNetworkAllow } from './private-network-allow.ts';

/**
 * The one policy for every call the API side makes on a session's behalf (HTTP hooks, MCP
 * servers, anything later): docs/security.md, "Outbound calls from the API side".
 *
 * - `https://` only; plain `http://` only to a host the operator's list names as the URL spells it.
 * - The host is parsed as WHATWG URLs parse it, so `127.1`, `2130706433`, `0x7f000001`,
 *   `[::ffff:127.0.0.1]` are all 127.0.0.1; a name is resolved once (every address).
 * - Loopback, private, link-local (169.254.169.254 included), carrier-grade NAT, unspecified,
 *   multicast, reserved and IPv6 forms embedding IPv4 (mapped ones judged as IPv4; NAT64, 6to4,
 *   Teredo) are refused unless the operator's list (STRATUS_PRIVATE_NETWORK_ALLOW) allows that
 *   address or host at that port.
 * - The stack's own endpoints are refused whatever the list says.
 * - The caller connects to the address returned, never to a second lookup.
 */
export interface OutboundPolicy {
  /**
   * Why `url` can never be called, found without resolving it (for a 400 when a session is
   * configured); undefined when it may be, subject to `resolve` at call time.
   */
  refusalOf(url: string): string | undefined;
  /** Why a session may not list these `allowedDomains` entries (allowed-domains-refusals.ts); empty when it may. */
  allowedDomainsRefusals(entries: readonly string[]): string[];
  /** Resolves the URL's host once and returns the one address to connect to; throws OutboundRefusedError. */
  resolve(url: URL): Promise<OutboundTarget>;
}

export interface OutboundPolicyOptions {
  /** The operator's entries (STRATUS_PRIVATE_NETWORK_ALLOW). */
  privateNetworkAllow: readonly string[];
  /** URLs or `host:port` of the stack's own endpoints, never reachable. */
  ownEndpoints: readonly string[];
}

export interface OutboundTarget {
  url: URL;
  /** The host as the URL names it, brackets stripped: the TLS server name and Host header of a name. */
  host: string;
  port: number;
  /** The checked address the connection goes to. */
  address: string;
  family: 4 | 6;
}

const OWN_ENDPOINT = "it is one of this Stratus deployment's own endpoints, which nothing a session configures may call";

/** A call the policy does not make; the message names the URL's origin and the reason, never anything the remote said. */
export class OutboundRefusedError extends Error {
  override name = 'OutboundRefusedError';
  constructor(url: URL, reason: string) {
    super(`Refused to call ${url.protocol}//${url.host}: ${reason}.`);
  }
}

export function createOutboundPolicy(options: OutboundPolicyOptions): OutboundPolicy {
  const allow = createPrivateNetworkAllow(options.privateNetworkAllow);
  const own = createOwnEndpoints(options.ownEndpoints);

  const refusalOf = (text: string): string | undefined => {
    if (!URL.canParse(text)) return 'not a URL';
    const url = new URL(text);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'only https:// URLs are called';
    const { host, port } = hostPort(url);
    const ip = canonicalIp(host);
    if (own.includes(host, ip ?? host, port)) return OWN_ENDPOINT;
    if (url.protocol === 'http:' && !allow.coversHost(host, port)) {
      return `plain http:// is used only for a host ${PRIVATE_NETWORK_ALLOW_SETTING} names (as the URL spells it, with its port); use https://`;
    }
    const range = ip ? nonPublicRange(ip) : undefined;
    if (ip && range && !allow.coversAddress(ip, port))
      return `${host === ip ? ip : `${host} (${ip})`} is a ${range} address, and ${PRIVATE_NETWORK_ALLOW_SETTING} does not allow it`;
    return undefined;
  };

  return {
    refusalOf,
    allowedDomainsRefusals: (entries) => allowedDomainsRefusals(entries, allow),
    async resolve(url) {
      const refusal = refusalOf(url.href);
      if (refusal) throw new OutboundRefusedError(url, refusal);
      const { host, port } = hostPort(url);
      const ip = canonicalIp(host);
      if (ip) return { url, host, port, address: ip, family: ip.includes(':') ? 6 : 4 };
      const resolved = await lookup(host, { all: true, verbatim: true }).catch(() => {
        throw new OutboundRefusedError(url, `${host} does not resolve`);
      });
      const picked = pickAddress(
        host,
        port,
        resolved.map((r) => canonicalIp(r.address)!),
        { allow, own },
      );
      if ('refusal' in picked) throw new OutboundRefusedError(url, picked.refusal);
      return { url, host, port, address: picked.address, family: picked.address.includes(':') ? 6 : 4 };
    },
  };
}

/**
 * The first resolved address that may be connected to (public, or allowed by the operator for
 * this name or address, and never one of the stack's own endpoints), else why none may.
 */
function pickAddress(
  host: string,
  port: number,
  addresses: readonly string[],
  rules: { allow: PrivateNetworkAllow; own: OwnEndpoints },
): { address: string } | { refusal: string } {
  let refusal: string | undefined;
  for (const address of addresses) {
    const range = nonPublicRange(address);
    if (rules.own.includes(host, address, port)) refusal ??= `${host} resolves to ${address}: ${OWN_ENDPOINT}`;
    else if (!range || rules.allow.coversHost(host, port) || rules.allow.coversAddress(address, port)) return { address };
    else refusal ??= `${host} resolves to ${address}, which is a ${range} address, and ${PRIVATE_NETWORK_ALLOW_SETTING} does not allow it`;
  }
  return { refusal: refusal ?? `${host} resolves to no address` };
}

function hostPort(url: URL): { host: string; port: number } {
  const host = url.hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
  return { host, port: url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80 };
}
