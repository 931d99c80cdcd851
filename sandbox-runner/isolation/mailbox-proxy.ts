import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { createSecureContext, TLSSocket } from 'node:tls';
import { egressRequestSchema, type EgressRequest } from '../common/egress-mailbox.ts';
import { checkHostPort, parseAllowList, type AllowListEntry } from '../common/network-allow-list.ts';
import { DENIED_BODY, type ProxyDecisionLog } from './domain-proxy.ts';
import type { MailboxCa } from './mailbox-ca.ts';
import { DEFAULT_MAILBOX_TIMING, exchangeThroughMailbox, MailboxTimeoutError, type MailboxTarget, type MailboxTiming } from './mailbox-client.ts';

/** The largest request body relayed: its base64 must fit the request schema's 8 MiB. */
const MAX_REQUEST_BODY_BYTES = 6 * 1024 * 1024;

/** Headers that belong to one hop: never copied into the mailbox, nor back from it. */
const HOP_HEADERS = new Set([
  'connection',
  'keep-alive',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'content-length',
]);

export interface MailboxProxyOptions {
  allowedDomains: string[];
  mailbox: MailboxTarget;
  ca: MailboxCa;
  /** @default DEFAULT_MAILBOX_TIMING */
  timing?: MailboxTiming;
  log?: ProxyDecisionLog;
}

/**
 * The proxy a command's HTTP(S)_PROXY points at in the `mailbox` egress mode (common/egress-mode.ts):
 * where the runner has no network but S3, each request a command makes to an allow-listed host
 * becomes an object in the workspace's mailbox (mailbox-client.ts), answered by the egress
 * forwarder outside the VPC, which checks the harness's grant again and makes the request.
 * A CONNECT is answered here: the TLS ends at this proxy with a certificate from the workspace's
 * CA (mailbox-ca.ts), and the requests read from it are relayed as `https://` URLs. A plain
 * request to a listed host is relayed as it is. A host or port off the list is refused here,
 * before anything is written. Name checks only: the forwarder resolves the name and connects to
 * public addresses only, so the address checks live there.
 */
export function createMailboxProxyServer(opts: MailboxProxyOptions): { server: Server; destroyAll(): void } {
  const entries = parseAllowList(opts.allowedDomains);
  // Closing the proxy (its command ended) stops every poll still waiting for an answer.
  const closed = new AbortController();
  const relayOpts = { ...opts, signal: closed.signal };
  const sockets = new Set<Socket>();
  const track = (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  };
  // Requests read from terminated TLS, each socket with the origin its CONNECT named.
  const origins = new WeakMap<object, string>();
  const inner = createServer((req, res) => tunnelledRequest(relayOpts, origins.get(req.socket), req, res));
  const server = createServer((req, res) => plainRequest(relayOpts, entries, req, res));
  server.on('connection', track);
  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    track(client);
    client.on('error', () => undefined);
    void terminateTls(opts, entries, req, client, head).then(
      (tlsSocket) => {
        if (!tlsSocket) return;
        origins.set(tlsSocket, `https://${req.url}`);
        inner.emit('connection', tlsSocket);
      },
      () => client.destroy(),
    );
  });
  return {
    server,
    destroyAll() {
      closed.abort(new Error('The command ended.'));
      for (const s of sockets) s.destroy();
    },
  };
}

/** A CONNECT: checked, then answered with TLS under a certificate for the host; undefined when refused. */
async function terminateTls(
  opts: MailboxProxyOptions,
  entries: AllowListEntry[],
  req: IncomingMessage,
  client: Socket,
  head: Buffer,
): Promise<TLSSocket | undefined> {
  const answer = (status: string, body: string) =>
    client.end(`HTTP/1.1 ${status}\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  const authority = /^\[([^\]]+)\]:(\d+)$/.exec(req.url ?? '') ?? /^([^:[\]]+):(\d+)$/.exec(req.url ?? '');
  if (!authority) return void answer('400 Bad Request', 'The sandbox proxy needs CONNECT host:port.\n');
  const [host, port] = [authority[1]!, Number(authority[2])];
  const allowed = checkHostPort(host, port, entries);
  opts.log?.({ method: 'CONNECT', host, port, allowed: allowed.allowed, ...(allowed.allowed ? {} : { reason: allowed.reason }) });
  if (!allowed.allowed) return void answer('403 Forbidden', DENIED_BODY(host));
  try {
    const cert = await opts.ca.certificateFor(host);
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length) client.unshift(head);
    const tlsSocket = new TLSSocket(client, { isServer: true, secureContext: createSecureContext(cert), ALPNProtocols: ['http/1.1'] });
    tlsSocket.on('error', () => client.destroy());
    return tlsSocket;
  } catch (err) {
    return void answer('502 Bad Gateway', `The sandbox proxy could not make a certificate for ${host}: ${(err as Error).message}\n`);
  }
}

/**
 * A request read from a terminated tunnel: relayed to the origin its CONNECT named. Only a path
 * may follow it, so the URL cannot name another host (`@other.example/`, an absolute URL).
 */
function tunnelledRequest(opts: RelayOptions, origin: string | undefined, req: IncomingMessage, res: ServerResponse): void {
  if (!origin || !req.url?.startsWith('/')) {
    res.writeHead(400, { 'content-type': 'text/plain' }).end('The sandbox proxy relays a path on the host the tunnel was opened to, nothing else.\n');
    return void req.resume();
  }
  relaySafely(opts, req, res, `${origin}${req.url}`);
}

/** A plain-HTTP proxy request (an absolute http:// URL): checked, then relayed. */
function plainRequest(opts: RelayOptions, entries: AllowListEntry[], req: IncomingMessage, res: ServerResponse): void {
  const target = URL.canParse(req.url ?? '') ? new URL(req.url!) : undefined;
  if (target?.protocol !== 'http:') {
    res.writeHead(400, { 'content-type': 'text/plain' }).end('The sandbox proxy needs an absolute http:// URL (https goes through CONNECT).\n');
    return void req.resume();
  }
  const host = target.hostname.replace(/^\[|\]$/g, '');
  const port = Number(target.port || 80);
  const allowed = checkHostPort(host, port, entries);
  opts.log?.({ method: req.method ?? 'GET', host, port, allowed: allowed.allowed, ...(allowed.allowed ? {} : { reason: allowed.reason }) });
  if (!allowed.allowed) {
    res.writeHead(403, { 'content-type': 'text/plain' }).end(DENIED_BODY(host));
    return void req.resume();
  }
  relaySafely(opts, req, res, target.toString());
}

/** A request whose client went away while it was read ends the exchange, never the runner. */
function relaySafely(opts: RelayOptions, req: IncomingMessage, res: ServerResponse, url: string): void {
  relay(opts, req, res, url).catch(() => res.destroy());
}

type RelayOptions = MailboxProxyOptions & { signal: AbortSignal };

/** One request through the mailbox; every failure is an HTTP answer the command's client can show. */
async function relay(opts: RelayOptions, req: IncomingMessage, res: ServerResponse, url: string): Promise<void> {
  const fail = (status: number, text: string) => {
    if (!res.headersSent) res.writeHead(status, { 'content-type': 'text/plain', 'x-stratus-egress': 'runner' });
    res.end(`${text}\n`);
  };
  const request = await readRequest(req, url);
  if (typeof request === 'string') return fail(request === 'too large' ? 413 : 405, `The sandbox proxy cannot relay this request: ${request}.`);
  try {
    const answer = await exchangeThroughMailbox(opts.mailbox, request, opts.timing ?? DEFAULT_MAILBOX_TIMING, opts.signal);
    const headers = Object.fromEntries(Object.entries(answer.headers).filter(([name]) => !HOP_HEADERS.has(name.toLowerCase())));
    // A HEAD answer keeps the length the origin announced; any other gets the body's own.
    const length = request.method === 'HEAD' ? answer.headers['content-length'] : String(answer.body.length);
    res.writeHead(answer.status, { ...headers, ...(length !== undefined ? { 'content-length': length } : {}) });
    res.end(request.method === 'HEAD' ? undefined : answer.body);
  } catch (err) {
    if (opts.signal.aborted) return void res.destroy();
    fail(err instanceof MailboxTimeoutError ? 504 : 502, `The sandbox proxy could not relay ${request.method} ${url}: ${(err as Error).message}`);
  }
}

/** The request as the mailbox holds it, or why it cannot be relayed. */
async function readRequest(req: IncomingMessage, url: string): Promise<EgressRequest | string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_REQUEST_BODY_BYTES) return 'too large';
    chunks.push(chunk);
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined && !HOP_HEADERS.has(name)) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  const parsed = egressRequestSchema.safeParse({ method: req.method, url, headers, ...(size > 0 ? { body: Buffer.concat(chunks).toString('base64') } : {}) });
  return parsed.success ? parsed.data : `method ${req.method} is not relayed`;
}
