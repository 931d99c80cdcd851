import type { IncomingMessage, Server } from 'node:http';
import { createDomainProxyServer, type PolicyFor, type ProxyDecisionLog } from '../isolation/domain-proxy.ts';
import { parseAllowList } from '../common/network-allow-list.ts';
import { verifyEgressToken } from '../common/egress-token.ts';

/**
 * The AWS egress proxy: the only thing the runner's security group may reach besides S3, and
 * the only path to the internet a command in the runner has. Every request must carry a token
 * the harness signed (egress-token.ts) as its Proxy-Authorization password; the token's
 * allow-list is then enforced exactly as the local sandbox's proxy enforces it, except that no
 * non-public address is ever reached, listed or not (inside the VPC they are the runner's
 * neighbours and the task metadata endpoint, never a legitimate destination).
 */
export interface EgressProxy {
  server: Server;
  port: number;
  close(): Promise<void>;
}

export async function startEgressProxy(opts: { key: string; port: number; host?: string; clock?: () => number; log?: ProxyDecisionLog }): Promise<EgressProxy> {
  const clock = opts.clock ?? Date.now;
  const refuse = (body: string) => ({ refuse: { status: 407, headers: { 'proxy-authenticate': 'Basic realm="stratus-egress"' }, body } });
  const policyFor: PolicyFor = (req: IncomingMessage) => {
    const token = basicPassword(req.headers['proxy-authorization']);
    if (!token) return refuse("The Stratus egress proxy needs the session's egress token as the proxy password.\n");
    const check = verifyEgressToken(opts.key, token, clock());
    if (!check.ok) return refuse(`The Stratus egress proxy refused the token: ${check.reason}.\n`);
    return { entries: parseAllowList(check.grant.allowedDomains), honourListedAddresses: false, label: check.grant.sessionId };
  };
  const { server, destroyAll } = createDomainProxyServer({ policyFor, log: opts.log });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host ?? '0.0.0.0', () => resolve());
  });
  return {
    server,
    port: (server.address() as { port: number }).port,
    async close() {
      destroyAll();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function basicPassword(header: string | undefined): string | undefined {
  const m = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(header ?? '');
  if (!m) return undefined;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon >= 0 ? decoded.slice(colon + 1) : undefined;
}
