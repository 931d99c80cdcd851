/**
 * The child side of the DynamoDB stand-in (see dynamo-server.ts): runs dynalite on loopback,
 * behind a check that every call is signed with the local credentials, and reports its URL over IPC. It lives in its own process, as DynamoDB is its own service in AWS.
 */
import dynalite from 'dynalite';
import { mkdirSync } from 'node:fs';
import { requireSignatures } from './dynamo-signatures.ts';
import { closeServer, listenOnLoopback } from './net/listen.ts';
import { serveFromChild } from './service-child.ts';
import type { SigningCredentials } from './sigv4-verify.ts';

serveFromChild(async (opts: { dir: string; port?: number; credentials: SigningCredentials }) => {
  mkdirSync(opts.dir, { recursive: true });
  const server = dynalite({ path: opts.dir, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  requireSignatures(server, opts.credentials);
  // Closing releases LevelDB's lock.
  return { url: await listenOnLoopback(server, opts.port), close: () => closeServer(server) };
});
