/**
 * The child side of the DynamoDB stand-in (see dynamo-server.ts): runs dynalite on loopback and
 * reports its URL over IPC. It lives in its own process, as DynamoDB is its own service in AWS.
 */
import dynalite from 'dynalite';
import { mkdirSync } from 'node:fs';
import { closeServer, listenOnLoopback } from './net/listen.ts';

export type DynamoProcessMessage = { type: 'listening'; url: string } | { type: 'failed'; message: string };

interface DynamoProcessOptions {
  dir: string;
  port?: number;
}

const send = (message: DynamoProcessMessage) => process.send?.(message, undefined, undefined, () => undefined);

async function main(opts: DynamoProcessOptions): Promise<void> {
  mkdirSync(opts.dir, { recursive: true });
  const server = dynalite({ path: opts.dir, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  const url = await listenOnLoopback(server, opts.port);
  // The parent stopped or died: close the database (LevelDB releases its lock) and go.
  process.on('disconnect', () => void closeServer(server).finally(() => process.exit(0)));
  send({ type: 'listening', url });
}

main(JSON.parse(process.argv[2] ?? '{}') as DynamoProcessOptions).catch((err: unknown) => {
  send({ type: 'failed', message: err instanceof Error ? err.message : String(err) });
  process.exit(1);
});
