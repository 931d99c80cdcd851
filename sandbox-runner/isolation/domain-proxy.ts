import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import { promises as fs } from 'node:fs';

/**
 * An HTTP proxy for one command, listening on a unix socket that is the sandbox's only way out
 * (its network namespace has nothing but loopback). It forwards plain HTTP and opens CONNECT
 * tunnels (HTTPS) only to hosts the session's policy allow-lists: `example.com` matches exactly,
 * `*.example.com` any subdomain. IP literals pass only when listed exactly; DNS is resolved here,
 * outside the sandbox.
 */
export interface DomainProxy {
  close(): Promise<void>;
}

export function isHostAllowed(host: string, allowed: string[]): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '').replace(/\.$/, '');
  return allowed.some((pattern) => {
    const p = pattern.toLowerCase();
    if (p.startsWith('*.')) return h.endsWith(p.slice(1)) && h.length > p.length - 1;
    return h === p;
  });
}

export const DENIED_BODY = (host: string) => `Blocked by the sandbox: ${host} is not in this session's allowed network domains.\n`;

export async function startDomainProxy(socketPath: string, allowedDomains: string[]): Promise<DomainProxy> {
  const sockets = new Set<Socket>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let target: URL;
    try {
      target = new URL(req.url ?? '');
    } catch {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('The sandbox proxy needs an absolute http:// URL.\n');
      return;
    }
    if (target.protocol !== 'http:' || !isHostAllowed(target.hostname, allowedDomains)) {
      res.writeHead(403, { 'content-type': 'text/plain' }).end(DENIED_BODY(target.hostname));
      return;
    }
    const headers = { ...req.headers };
    delete headers['proxy-connection'];
    delete headers['proxy-authorization'];
    const upstream = httpRequest(
      { host: target.hostname, port: target.port || 80, path: `${target.pathname}${target.search}`, method: req.method, headers },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on('error', (err) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`The sandbox proxy could not reach ${target.hostname}: ${err.message}\n`);
    });
    req.pipe(upstream);
  });

  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => undefined);
    const [host = '', portText = '443'] = splitHostPort(req.url ?? '');
    if (!isHostAllowed(host, allowedDomains)) {
      const body = DENIED_BODY(host);
      client.end(`HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
      return;
    }
    const upstream = connect(Number(portText), host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', () => client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n'));
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });

  await fs.rm(socketPath, { force: true });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolve());
  });
  return {
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await fs.rm(socketPath, { force: true });
    },
  };
}

function splitHostPort(authority: string): [string, string] {
  const m = /^\[([^\]]+)\](?::(\d+))?$/.exec(authority) ?? /^([^:]+)(?::(\d+))?$/.exec(authority);
  return [m?.[1] ?? '', m?.[2] ?? '443'];
}
