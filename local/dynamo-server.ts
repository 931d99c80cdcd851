import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { bundleWorker } from './bundle-worker.ts';
import type { DynamoProcessMessage } from './dynamo-process.ts';

export interface EmbeddedServer {
  url: string;
  close(): Promise<void>;
}

const ENTRY = fileURLToPath(new URL('./dynamo-process.ts', import.meta.url));
/** A stand-in that has not reported its URL by then is treated as failed. */
const START_TIMEOUT_MS = 30_000;

/**
 * A DynamoDB-protocol server (dynalite, LevelDB on disk) so the real DynamoDB client runs
 * against real conditional writes, pagination and the 400 KB item limit. Our table design needs
 * no transactions, which dynalite lacks (docs/local-stack.md).
 *
 * It runs in a child process, as DynamoDB is a separate service in AWS: LevelDB's native memory
 * and dynalite's request work stay out of the API process, whose memory the soak benchmark
 * measures (docs/workspaces.md), and out of its event loop. The child ends with its parent.
 */
export async function startDynamoServer(opts: { dir: string; port?: number }): Promise<EmbeddedServer> {
  const file = await bundleWorker(ENTRY);
  const child = fork(file, [JSON.stringify({ dir: opts.dir, port: opts.port })], {
    execArgv: [],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const url = await waitForUrl(child);
  let closing = false;
  child.once('exit', (code, signal) => {
    if (!closing) process.stderr.write(`${JSON.stringify({ level: 'error', msg: 'DynamoDB stand-in exited', pid: child.pid, code, signal })}\n`);
  });
  return {
    url,
    close: async () => {
      closing = true;
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.disconnect();
      const killer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(killer);
    },
  };
}

async function waitForUrl(child: ChildProcess): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error(`The DynamoDB stand-in did not start within ${START_TIMEOUT_MS / 1000} s.`)), START_TIMEOUT_MS);
    const fail = (err: Error) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(err);
    };
    child.on('message', (message: DynamoProcessMessage) => {
      if (message.type === 'failed') fail(new Error(`The DynamoDB stand-in failed to start: ${message.message}`));
      if (message.type === 'listening') {
        clearTimeout(timer);
        resolve(message.url);
      }
    });
    child.once('error', fail);
    child.once('exit', (code, signal) => fail(new Error(`The DynamoDB stand-in exited before it started (code ${code}, signal ${signal}).`)));
  });
}
