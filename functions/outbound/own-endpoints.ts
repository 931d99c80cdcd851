import { canonicalIp } from '../../sandbox-runner/common/network-allow-list.ts';
import { isThisHost } from '../../sandbox-runner/common/this-host.ts';

/**
 * The stack's own endpoints (locally: the DynamoDB, S3 and Lambda-invoke stand-ins, the model
 * server and the API itself; on Lambda: the runtime API). Nothing a session configures may call
 * them, whatever the operator allows: the stand-ins take any credentials, so a hook pointed at
 * one could read or write every tenant's data.
 *
 * An endpoint on this machine (a loopback, unspecified or own interface address, or
 * `localhost`) is reached by any of those addresses at its port, so every one of them counts.
 */
export interface OwnEndpoints {
  /** Whether connecting to `address:port` (for a URL naming `host`) would reach one of them. */
  includes(host: string, address: string, port: number): boolean;
}

export function createOwnEndpoints(endpoints: readonly string[]): OwnEndpoints {
  const localPorts = new Set<number>();
  const remote = new Set<string>();
  for (const endpoint of endpoints) {
    const parsed = hostPort(endpoint);
    if (!parsed) continue;
    if (isThisMachine(parsed.host)) localPorts.add(parsed.port);
    else remote.add(`${canonicalIp(parsed.host) ?? parsed.host}|${parsed.port}`);
  }
  return {
    includes(host, address, port) {
      if (localPorts.has(port) && isThisMachine(address)) return true;
      return remote.has(`${canonicalIp(address) ?? address}|${port}`) || remote.has(`${host.toLowerCase()}|${port}`);
    },
  };
}

/** `http://127.0.0.1:8000`, or `host:port` as the Lambda runtime API is given. */
function hostPort(endpoint: string): { host: string; port: number } | undefined {
  const url =
    URL.canParse(endpoint) && /^[a-z][a-z0-9+.-]*:\/\//i.test(endpoint)
      ? new URL(endpoint)
      : URL.canParse(`http://${endpoint}`)
        ? new URL(`http://${endpoint}`)
        : undefined;
  if (!url) return undefined;
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  return { host: url.hostname.replace(/^\[|\]$/g, '').toLowerCase(), port };
}

/** `localhost` (and its subdomains) or an address that reaches this machine. */
function isThisMachine(host: string): boolean {
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  const ip = canonicalIp(host);
  return ip !== undefined && isThisHost(ip);
}
