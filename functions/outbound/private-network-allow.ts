import ipaddr from 'ipaddr.js';
import { canonicalIp, checkHostPort, DEFAULT_PORTS, parseAllowListEntry, type AllowListEntry } from '../../sandbox-runner/common/network-allow-list.ts';

/**
 * The operator's list of non-public destinations sessions may reach (STRATUS_PRIVATE_NETWORK_ALLOW):
 * entries in the `allowedDomains` syntax (`mcp.internal.example`, `*.corp.example:8443`,
 * `127.0.0.1:9000`, `[fd00::1]`) plus CIDRs (`10.0.0.0/8`, `fd00::/8`). A name or IP entry
 * allows ports 80 and 443 unless it names one, exactly as in `allowedDomains`; a CIDR allows
 * every port of its addresses (a network the operator trusts as a whole). Only the operator sets
 * it: a session can never widen it.
 */
export type PrivateNetworkEntry = AllowListEntry | { kind: 'cidr'; host: string; range: [ipaddr.IPv4 | ipaddr.IPv6, number] };

export const PRIVATE_NETWORK_ALLOW_SETTING = 'STRATUS_PRIVATE_NETWORK_ALLOW';

export const PRIVATE_NETWORK_ENTRY_HINT =
  'expected host names ("mcp.internal.example"), "*.domain", IP addresses, each optionally with ":PORT", or CIDRs ("10.0.0.0/8")';

export function parsePrivateNetworkEntry(text: string): PrivateNetworkEntry | undefined {
  const raw = text.trim().toLowerCase();
  if (!raw.includes('/')) return parseAllowListEntry(raw);
  if (!ipaddr.isValidCIDR(raw)) return undefined;
  const [address, bits] = ipaddr.parseCIDR(raw);
  // An IPv4-mapped range is the IPv4 range it maps, as addresses are judged.
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96) {
    return { kind: 'cidr', host: raw, range: [(address as ipaddr.IPv6).toIPv4Address(), bits - 96] };
  }
  return { kind: 'cidr', host: raw, range: [address, bits] };
}

export interface PrivateNetworkAllow {
  readonly entries: readonly PrivateNetworkEntry[];
  /** Whether an address (any spelling) at this port is named by an IP entry or inside a CIDR. */
  coversAddress(address: string, port: number): boolean;
  /**
   * Whether a host as a URL or `allowedDomains` spells it (a name, or an IP literal) at this
   * port is named by an entry: names by name entries, IP literals by IP entries and CIDRs.
   */
  coversHost(host: string, port: number): boolean;
}

export function createPrivateNetworkAllow(texts: readonly string[]): PrivateNetworkAllow {
  const entries = texts.map((t) => parsePrivateNetworkEntry(t)).filter((e): e is PrivateNetworkEntry => e !== undefined);
  const listEntries = entries.filter((e): e is AllowListEntry => e.kind !== 'cidr');
  const cidrs = entries.flatMap((e) => (e.kind === 'cidr' ? [e.range] : []));
  const coversAddress = (address: string, port: number) => {
    const ip = ipaddr.process(address.replace(/^\[|\]$/g, ''));
    if (cidrs.some(([range, bits]) => range.kind() === ip.kind() && ip.match(range, bits))) return true;
    return checkHostPort(ip.toString(), port, listEntries).allowed;
  };
  return {
    entries,
    coversAddress,
    coversHost: (host, port) => (canonicalIp(host) ? coversAddress(host, port) : checkHostPort(host, port, listEntries).allowed),
  };
}

/** The ports an `allowedDomains` entry opens: the one it names, else 80 and 443. */
export function entryPorts(entry: AllowListEntry): readonly number[] {
  return entry.port === undefined ? DEFAULT_PORTS : [entry.port];
}
