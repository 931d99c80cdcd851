import { networkInterfaces } from 'node:os';
import ipaddr from 'ipaddr.js';
import { canonicalIp } from './network-allow-list.ts';

/**
 * Whether a connection to `address` (a canonical IP) reaches this machine: a loopback address,
 * the unspecified address (`0.0.0.0`, `::`, which connect to this host) or an address of one of
 * its interfaces. Both the sandbox proxies and the API side's outbound policy use it to keep the
 * stack's own services unreachable however their address is spelled.
 */
export function isThisHost(address: string): boolean {
  const range = ipaddr.process(address).range();
  if (range === 'loopback' || range === 'unspecified') return true;
  return Object.values(networkInterfaces()).some((list) => list?.some((i) => canonicalIp(i.address) === address));
}
