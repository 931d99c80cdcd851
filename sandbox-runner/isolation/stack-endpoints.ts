import { lookup } from 'node:dns/promises';
import { canonicalIp } from '../common/network-allow-list.ts';
import { isThisHost } from '../common/this-host.ts';

/**
 * The deployment's own service endpoints (locally: the DynamoDB, S3 and Lambda Invoke
 * stand-ins, the API, the scripted model server), which no sandboxed request may reach whatever
 * the session's allow-list says: through them a command could read every tenant's workspace
 * objects and messages, or invoke the runner for another workspace. The runner's composition
 * root hands the list to both proxies (a command's and git's).
 *
 * A destination matches an endpoint when the port is the endpoint's and the address is one the
 * endpoint's host resolves to, or when both are this machine: any loopback address
 * (`127.0.0.0/8`, `::1`, `::ffff:127.x`), the unspecified address (`0.0.0.0`, `::`, which
 * connect to this host) or an address of one of its interfaces. So `localhost`, `127.0.0.2`,
 * `[::1]`, `0.0.0.0` and any name resolving to them are covered, not just the URL's spelling.
 */
export interface StackEndpoints {
  /** Whether a connection to `address` (an IP, as the proxy resolved it) on `port` would reach one of the endpoints. */
  includes(address: string, port: number): Promise<boolean>;
}

/** No endpoints to protect (a runner built without a composition root's list, e.g. in unit tests). */
export const NO_STACK_ENDPOINTS: StackEndpoints = { includes: async () => false };

interface Endpoint {
  port: number;
  /** Resolved once, on first use; a name that does not resolve protects nothing beyond "this host" below. */
  addresses: Promise<string[]>;
}

/** From the endpoints' URLs (`http://127.0.0.1:4569`); a URL without a port means its scheme's default. */
export function stackEndpoints(urls: readonly string[]): StackEndpoints {
  const endpoints = urls.map(parseEndpoint);
  return {
    async includes(address, port) {
      const target = canonicalIp(address);
      if (!target) return false;
      for (const endpoint of endpoints.filter((e) => e.port === port)) {
        const addresses = await endpoint.addresses;
        if (addresses.includes(target)) return true;
        if (isThisHost(target) && addresses.some(isThisHost)) return true;
      }
      return false;
    },
  };
}

function parseEndpoint(text: string): Endpoint {
  const url = new URL(text);
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  const literal = canonicalIp(url.hostname);
  const addresses = literal
    ? Promise.resolve([literal])
    : lookup(url.hostname, { all: true, verbatim: true }).then(
        (found) => found.map((a) => canonicalIp(a.address)!),
        () => [],
      );
  return { port, addresses };
}
