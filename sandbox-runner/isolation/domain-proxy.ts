import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { lookup } from 'node:dns/promises';
import { connect, type Socket } from 'node:net';
import { promises as fs } from 'node:fs';
import { canonicalIp, checkAddresses, checkHostPort, parseAllowList, type AllowListEntry } from '../common/network-allow-list.ts';
import { NO_STACK_ENDPOINTS, type StackEndpoints } from './stack-endpoints.ts';

/**
 * The allow-list proxy. It forwards plain HTTP and opens CONNECT tunnels only to host:port
 * pairs the policy allows (network-allow-list.ts: names, `*.domain`, IPs, ports 80/443 unless an
 * entry names one). DNS is resolved here, once: a name whose addresses are all non-public
 * (loopback, private, link-local, …) is refused unless such an address is itself listed, and the
 * connection goes to an address that passed the check, never to a second resolution. The
 * deployment's own services are refused at any address that reaches them, listed or not
 * (stack-endpoints.ts).
 *
 * Used two ways: for one sandboxed command, on a unix socket that is its only way out
 * (`startDomainProxy`); and as the AWS egress proxy, where each request proves its policy with a
 * signed token (egress/egress-proxy.ts).
 */
export interface DomainProxy {
  close(): Promise<void>;
}

export interface ProxyPolicy {
  entries: AllowListEntry[];
  /** Connect to non-public addresses that are listed (the local sandbox) or never (the AWS egress proxy). */
  honourListedAddresses: boolean;
  /** The deployment's own services, refused whatever the entries say (stack-endpoints.ts). @default none */
  stackEndpoints?: StackEndpoints;
  /** For the proxy's log: who asked (a session id). */
  label?: string;
}

/** Decides the policy of a request, or answers it (407) itself and returns undefined. */
export type PolicyFor = (req: IncomingMessage) => ProxyPolicy | { refuse: { status: number; headers?: Record<string, string>; body: string } };

export type ProxyDecisionLog = (entry: {
  label?: string;
  method: string;
  host: string;
  port: number;
  allowed: boolean;
  reason?: string;
  address?: string;
}) => void;

export const DENIED_BODY = (host: string) => `Blocked by the sandbox: ${host} is not in this session's allowed network domains.\n`;
const PORT_BODY = (host: string, port: number) =>
  `Blocked by the sandbox: port ${port} of ${host} is not allowed; only 80 and 443 are, unless an allowed network domain names the port (${host}:${port}).\n`;
const ADDRESS_BODY = (host: string, address: string, range: string, honoured: boolean) =>
  `Blocked by the sandbox: ${host} resolves to ${address}, a ${range} address${honoured ? `; name ${address} itself to reach it` : ''}.\n`;
const hostPort = (host: string, port: number) => `${host.includes(':') ? `[${host}]` : host}:${port}`;
export const STACK_ENDPOINT_BODY = (host: string, address: string, port: number) =>
  `Blocked by the sandbox: ${hostPort(host, port)}${host === address ? '' : ` (${address})`} is one of this Stratus deployment's own services (its database, storage, functions, API or model); a sandbox can never reach them, whatever its allowed network domains say.\n`;

type Verdict = { ok: true; address: string } | { ok: false; status: number; body: string; reason: string };

/** The full check for one destination: host and port against the list, then its resolved addresses. */
export async function decide(host: string, port: number, policy: ProxyPolicy): Promise<Verdict> {
  const bare = host.replace(/^\[|\]$/g, '');
  const byName = checkHostPort(bare, port, policy.entries);
  if (!byName.allowed) {
    return byName.reason === 'port'
      ? { ok: false, status: 403, body: PORT_BODY(bare, port), reason: 'port' }
      : { ok: false, status: 403, body: DENIED_BODY(bare), reason: 'host' };
  }
  const literal = canonicalIp(bare);
  let resolved: string[];
  try {
    resolved = literal ? [literal] : (await lookup(bare, { all: true, verbatim: true })).map((a) => a.address);
  } catch (err) {
    return { ok: false, status: 502, body: `The sandbox proxy could not resolve ${bare}: ${(err as Error).message}\n`, reason: 'dns' };
  }
  const addresses = checkAddresses(resolved, policy.entries, policy.honourListedAddresses);
  if (!addresses.allowed) {
    return {
      ok: false,
      status: 403,
      body: ADDRESS_BODY(bare, addresses.address, addresses.range, policy.honourListedAddresses),
      reason: `address ${addresses.address}`,
    };
  }
  const endpoints = policy.stackEndpoints ?? NO_STACK_ENDPOINTS;
  for (const address of addresses.addresses) {
    if (await endpoints.includes(address, port)) {
      return { ok: false, status: 403, body: STACK_ENDPOINT_BODY(bare, address, port), reason: `stack endpoint ${address}:${port}` };
    }
  }
  return { ok: true, address: addresses.addresses[0]! };
}

export function createDomainProxyServer(opts: { policyFor: PolicyFor; log?: ProxyDecisionLog }): { server: Server; destroyAll(): void } {
  const sockets = new Set<Socket>();
  const track = (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => proxyHttp(req, res, opts));
  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    track(client);
    client.on('error', () => undefined);
    proxyConnect(req, client, head, opts, track);
  });
  server.on('connection', track);
  return {
    server,
    destroyAll() {
      for (const s of sockets) s.destroy();
    },
  };
}

type ProxyOptions = { policyFor: PolicyFor; log?: ProxyDecisionLog };

function logDecision(opts: ProxyOptions, policy: ProxyPolicy, method: string, host: string, port: number, verdict: Verdict): void {
  opts.log?.({ label: policy.label, method, host, port, allowed: verdict.ok, ...(verdict.ok ? { address: verdict.address } : { reason: verdict.reason }) });
}

/** A plain-HTTP proxy request (absolute URL): checked, then forwarded to the checked address. */
function proxyHttp(req: IncomingMessage, res: ServerResponse, opts: ProxyOptions): void {
  const policy = opts.policyFor(req);
  if ('refuse' in policy) {
    res.writeHead(policy.refuse.status, { 'content-type': 'text/plain', ...policy.refuse.headers }).end(policy.refuse.body);
    return;
  }
  let target: URL;
  try {
    target = new URL(req.url ?? '');
  } catch {
    res.writeHead(400, { 'content-type': 'text/plain' }).end('The sandbox proxy needs an absolute http:// URL.\n');
    return;
  }
  if (target.protocol !== 'http:') {
    res.writeHead(403, { 'content-type': 'text/plain' }).end(DENIED_BODY(target.hostname));
    return;
  }
  const port = Number(target.port || 80);
  void decide(target.hostname, port, policy).then((verdict) => {
    logDecision(opts, policy, req.method ?? 'GET', target.hostname, port, verdict);
    if (verdict.ok) return forwardHttp(req, res, target, port, verdict.address);
    res.writeHead(verdict.status, { 'content-type': 'text/plain' }).end(verdict.body);
    req.resume();
  });
}

function forwardHttp(req: IncomingMessage, res: ServerResponse, target: URL, port: number, address: string): void {
  const headers = { ...req.headers };
  delete headers['proxy-connection'];
  delete headers['proxy-authorization'];
  // Connect to the checked address; the Host header still names the site.
  const upstream = httpRequest({ host: address, port, path: `${target.pathname}${target.search}`, method: req.method, headers, setHost: false }, (up) => {
    res.writeHead(up.statusCode ?? 502, up.headers);
    up.pipe(res);
  });
  upstream.on('error', (err) => {
    if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
    res.end(`The sandbox proxy could not reach ${target.hostname}: ${err.message}\n`);
  });
  req.pipe(upstream);
}

/** A CONNECT request: checked, then tunnelled to the checked address. */
function proxyConnect(req: IncomingMessage, client: Socket, head: Buffer, opts: ProxyOptions, track: (s: Socket) => void): void {
  const answer = (status: string, body: string, extra = '') =>
    client.end(`HTTP/1.1 ${status}\r\ncontent-type: text/plain\r\n${extra}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  const policy = opts.policyFor(req);
  if ('refuse' in policy) {
    const extra = Object.entries(policy.refuse.headers ?? {})
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('');
    answer(`${policy.refuse.status} ${policy.refuse.status === 407 ? 'Proxy Authentication Required' : 'Forbidden'}`, policy.refuse.body, extra);
    return;
  }
  const authority = splitHostPort(req.url ?? '');
  if (!authority) {
    answer('400 Bad Request', 'The sandbox proxy needs CONNECT host:port.\n');
    return;
  }
  const [host, port] = authority;
  void decide(host, port, policy).then((verdict) => {
    logDecision(opts, policy, 'CONNECT', host, port, verdict);
    if (!verdict.ok) return answer(verdict.status === 403 ? '403 Forbidden' : '502 Bad Gateway', verdict.body);
    const upstream = connect(port, verdict.address, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    track(upstream);
    upstream.on('error', () => client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n'));
  });
}

/** The proxy for one sandboxed command: a fixed policy, on a unix socket bound into its sandbox. */
export async function startDomainProxy(socketPath: string, allowedDomains: string[], stackEndpoints: StackEndpoints): Promise<DomainProxy> {
  const policy: ProxyPolicy = { entries: parseAllowList(allowedDomains), honourListedAddresses: true, stackEndpoints };
  const { server, destroyAll } = createDomainProxyServer({ policyFor: () => policy });
  await fs.rm(socketPath, { force: true });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolve());
  });
  return {
    async close() {
      destroyAll();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await fs.rm(socketPath, { force: true });
    },
  };
}

/** The same proxy on a loopback TCP port, for the runner's own clients (git). */
export async function startLoopbackDomainProxy(allowedDomains: string[], stackEndpoints: StackEndpoints): Promise<DomainProxy & { url: string }> {
  const policy: ProxyPolicy = { entries: parseAllowList(allowedDomains), honourListedAddresses: true, stackEndpoints };
  const { server, destroyAll } = createDomainProxyServer({ policyFor: () => policy });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    async close() {
      destroyAll();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function splitHostPort(authority: string): [string, number] | undefined {
  const m = /^\[([^\]]+)\](?::(\d+))?$/.exec(authority) ?? /^([^:[\]]+)(?::(\d+))?$/.exec(authority);
  if (!m) return undefined;
  const port = Number(m[2] ?? '443');
  if (!Number.isInteger(port) || port < 1 || port > 65_535) return undefined;
  return [m[1]!, port];
}
