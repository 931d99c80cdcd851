/** A local stand-in's address and how to stop it. */
export interface EmbeddedServer {
  url: string;
  close(): Promise<void>;
}

export type ServiceProcessMessage = { type: 'listening'; url: string } | { type: 'failed'; message: string };

/**
 * The child side: starts the server from the parent's arguments, reports its URL, and closes it
 * (releasing its files) and exits when the parent stops or dies.
 */
export function serveFromChild<A>(start: (args: A) => Promise<EmbeddedServer>): void {
  const send = (message: ServiceProcessMessage) => process.send?.(message, undefined, undefined, () => undefined);
  start(JSON.parse(process.argv[2] ?? '{}') as A).then(
    (server) => {
      process.on('disconnect', () => void server.close().finally(() => process.exit(0)));
      send({ type: 'listening', url: server.url });
    },
    (err: unknown) => {
      send({ type: 'failed', message: err instanceof Error ? err.message : String(err) });
      process.exit(1);
    },
  );
}
