import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SeenRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * An HTTP server on every loopback address (`::`, dual stack: 127.0.0.0/8 and ::1 both reach it)
 * that counts the TCP connections it is offered (a TLS attempt counts too) and keeps the requests
 * it reads: what an attack test asserts was never reached.
 */
export async function startCountingServer(handler: (req: SeenRequest, res: ServerResponse) => void = (_req, res) => res.end('reached')) {
  const seen = { connections: 0, requests: [] as SeenRequest[] };
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const request = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
    seen.requests.push(request);
    handler(request, res);
  });
  server.keepAliveTimeout = 0;
  server.on('connection', () => seen.connections++);
  await new Promise<void>((resolve) => server.listen(0, '::', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    server,
    seen,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export type CountingServer = Awaited<ReturnType<typeof startCountingServer>>;
