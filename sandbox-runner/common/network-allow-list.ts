import ipaddr from 'ipaddr.js';
import { z } from 'zod';

/**
 * A session's network allow-list: which hosts and ports its commands may reach through the
 * sandbox's proxy, and which resolved addresses are acceptable. One parser for the API's
 * validation, the runner's protocol and both proxies, so an entry means the same everywhere.
 *
 * Entry syntax (case-insensitive):
 * - `example.com` the name exactly; `*.example.com` any subdomain (not the name itself);
 * - `203.0.113.7`, `[2001:db8::1]` or `2001:db8::1` an IP literal;
 * - any of the above with `:PORT` (`example.com:8443`, `[2001:db8::1]:8443`): that port only.
 *   Without a port an entry allows ports 80 and 443.
 *
 * A name is reached only at addresses that are public unicast. A name that resolves to a
 * loopback, private, link-local (169.254.169.254 included), carrier-grade NAT, unspecified,
 * multicast or otherwise reserved address — IPv4-mapped and NAT64 forms included — is refused,
 * unless that address is itself an entry of the list (and the proxy honours listed addresses).
 */
export interface AllowListEntry {
  /** Lower-case name without a trailing dot, or the IP's canonical text (IPv4-mapped forms as IPv4). */
  host: string;
  kind: 'name' | 'wildcard' | 'ip';
  /** The one port the entry allows; 80 and 443 when absent. */
  port?: number;
}

export const DEFAULT_PORTS: readonly number[] = [80, 443];

const LABEL = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
const NAME = new RegExp(`^(\\*\\.)?(${LABEL}(?:\\.${LABEL})*)$`);
const PORT = /^[0-9]{1,5}$/;

/** Parses one entry; undefined when it is not one of the forms above. */
export function parseAllowListEntry(text: string): AllowListEntry | undefined {
  const raw = text.trim().toLowerCase();
  let hostPart = raw;
  let portPart: string | undefined;
  const bracketed = /^\[([^\]]+)\](?::(.*))?$/.exec(raw);
  if (bracketed) {
    hostPart = bracketed[1]!;
    portPart = bracketed[2];
    if (!ipaddr.IPv6.isValid(hostPart)) return undefined;
  } else if ((raw.match(/:/g) ?? []).length === 1) {
    [hostPart, portPart] = raw.split(':') as [string, string];
  }
  let port: number | undefined;
  if (portPart !== undefined) {
    if (!PORT.test(portPart)) return undefined;
    port = Number(portPart);
    if (port < 1 || port > 65_535) return undefined;
  }
  const ip = canonicalIp(hostPart);
  if (ip) return { host: ip, kind: 'ip', ...(port ? { port } : {}) };
  // Dotted digits that are not an IPv4 address (`1.2.3`, `999.1.1.1`) would be read as one by resolvers.
  if (/^[0-9.]+$/.test(hostPart)) return undefined;
  const m = NAME.exec(hostPart.replace(/\.$/, ''));
  if (!m || m[2]!.length > 253) return undefined;
  return { host: m[2]!, kind: m[1] ? 'wildcard' : 'name', ...(port ? { port } : {}) };
}

export const ALLOW_LIST_ENTRY_HINT =
  'must be a host name ("registry.npmjs.org"), "*.domain" for its subdomains, or an IP address, optionally with ":PORT" (ports 80 and 443 otherwise)';

/** One entry, validated the same way by the API and the runner. */
export const allowListEntrySchema = z
  .string()
  .max(300)
  .refine((s) => parseAllowListEntry(s) !== undefined, ALLOW_LIST_ENTRY_HINT);
export const allowListSchema = z.array(allowListEntrySchema).max(200);

export function parseAllowList(entries: readonly string[]): AllowListEntry[] {
  return entries.map((e) => parseAllowListEntry(e)).filter((e): e is AllowListEntry => e !== undefined);
}

/** The canonical text of an IP literal (brackets and a zone stripped, IPv4-mapped IPv6 as IPv4), else undefined. */
export function canonicalIp(host: string): string | undefined {
  const h = host.replace(/^\[|\]$/g, '');
  if (ipaddr.IPv4.isValidFourPartDecimal(h) || ipaddr.IPv6.isValid(h)) return ipaddr.process(h).toString();
  return undefined;
}

export type HostDecision = { allowed: true } | { allowed: false; reason: 'host' | 'port' };

/** Whether host:port is allowed by some entry (IP literals only by IP entries, names by name entries). */
export function checkHostPort(host: string, port: number, entries: readonly AllowListEntry[]): HostDecision {
  const ip = canonicalIp(host);
  const name = host.toLowerCase().replace(/\.$/, '');
  const hostMatches = entries.filter((e) => {
    if (ip) return e.kind === 'ip' && e.host === ip;
    if (e.kind === 'name') return e.host === name;
    return e.kind === 'wildcard' && name.endsWith(`.${e.host}`);
  });
  if (hostMatches.length === 0) return { allowed: false, reason: 'host' };
  const portOk = hostMatches.some((e) => (e.port === undefined ? DEFAULT_PORTS.includes(port) : e.port === port));
  return portOk ? { allowed: true } : { allowed: false, reason: 'port' };
}

/** The special-purpose range of an address in words, or undefined for public unicast. */
export function nonPublicRange(address: string): string | undefined {
  const range = ipaddr.process(address).range();
  if (range === 'unicast') return undefined;
  return RANGE_WORDS[range] ?? `reserved (${range})`;
}

const RANGE_WORDS: Record<string, string> = {
  loopback: 'loopback',
  private: 'private',
  uniqueLocal: 'private (unique local)',
  linkLocal: 'link-local',
  carrierGradeNat: 'carrier-grade NAT',
  unspecified: 'unspecified',
  multicast: 'multicast',
  broadcast: 'broadcast',
  rfc6052: 'NAT64',
  rfc6145: 'IPv4-translated',
  '6to4': '6to4',
  teredo: 'Teredo',
};

export type AddressDecision = { allowed: true; addresses: string[] } | { allowed: false; address: string; range: string };

/**
 * Keeps the resolved addresses that may be connected to: public unicast ones, and listed ones
 * when `honourListedAddresses` (the local sandbox; the AWS egress proxy refuses every
 * non-public address). Refused when none is left. The caller connects only to what is kept,
 * so there is no second resolution between this check and the connection.
 */
export function checkAddresses(resolved: readonly string[], entries: readonly AllowListEntry[], honourListedAddresses: boolean): AddressDecision {
  const listed = new Set(entries.filter((e) => e.kind === 'ip').map((e) => e.host));
  const kept: string[] = [];
  let firstRefused: { address: string; range: string } | undefined;
  for (const address of resolved) {
    const canonical = ipaddr.process(address).toString();
    const range = nonPublicRange(canonical);
    if (range === undefined || (honourListedAddresses && listed.has(canonical))) kept.push(canonical);
    else firstRefused ??= { address: canonical, range };
  }
  if (kept.length > 0) return { allowed: true, addresses: kept };
  return { allowed: false, ...(firstRefused ?? { address: '(none)', range: 'unresolved' }) };
}
