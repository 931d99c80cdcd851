import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Listens on loopback (port 0 = ephemeral) and resolves to the base URL. */
export async function listenOnLoopback(server: Server, port = 0): Promise<string> {
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
