import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Listens on loopback (port 0 = ephemeral) and resolves to the base URL.
 *
 * Idle keep-alive connections are never closed by the server (`keepAliveTimeout = 0`). The AWS
 * SDK's Node agent keeps an idle socket until the server closes it: it has no idle timeout of
 * its own, and Node's agent ignores a server's `Keep-Alive: timeout=N` hint unless it has one.
 * With Node's default 5 s server timeout, a client under load could pick a socket in the moment
 * the server was closing it and fail with `socket hang up` / `ECONNRESET`. A server that never
 * closes an idle connection cannot race its client; the client (or `closeServer`) ends it.
 */
export async function listenOnLoopback(server: Server, port = 0): Promise<string> {
  server.keepAliveTimeout = 0;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port: actual } = server.address() as AddressInfo;
  return `http://127.0.0.1:${actual}`;
}

/** Closes a server, dropping idle keep-alive sockets so shutdown is prompt. */
export async function closeServer(server: Server): Promise<void> {
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections?.();
  });
}
