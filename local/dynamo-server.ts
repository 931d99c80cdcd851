import dynalite from 'dynalite';
import { mkdirSync } from 'node:fs';
import { closeServer, listenOnLoopback } from './net/listen.ts';

export interface EmbeddedServer {
  url: string;
  close(): Promise<void>;
}

/**
 * An in-process DynamoDB-protocol server (dynalite, LevelDB on disk) so the real DynamoDB client
 * runs against real conditional writes, pagination and the 400 KB item limit. Our table design
 * needs no transactions, which dynalite lacks (docs/local-stack.md).
 */
export async function startDynamoServer(opts: { dir: string; port?: number }): Promise<EmbeddedServer> {
  mkdirSync(opts.dir, { recursive: true });
  const server = dynalite({ path: opts.dir, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  const url = await listenOnLoopback(server, opts.port);
  return { url, close: () => closeServer(server) };
}
