import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { bundleWorker } from './bundle-worker.ts';
import type { EmbeddedServer, ServiceProcessMessage } from './service-child.ts';

export type { EmbeddedServer } from './service-child.ts';

/** A stand-in that has not reported its URL by then is treated as failed. */
const START_TIMEOUT_MS = 30_000;

/**
 * Runs a local stand-in for an AWS service (DynamoDB, S3) in a child process, as the service is
 * its own machine in AWS: its request work runs beside the API process, not on its event loop,
 * and its memory is not the API's. The child (`entry`, which calls `serveFromChild`) is bundled
 * and started on plain Node, reports its URL, and ends with its parent (service-child.ts).
 */
export async function startServiceProcess(opts: { name: string; entry: string; args: unknown; execArgv?: string[] }): Promise<EmbeddedServer> {
  const file = await bundleWorker(opts.entry);
  const child = fork(file, [JSON.stringify(opts.args)], { execArgv: opts.execArgv ?? [], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const url = await waitForUrl(opts.name, child);
  let closing = false;
  child.once('exit', (code, signal) => {
    if (!closing) process.stderr.write(`${JSON.stringify({ level: 'error', msg: `${opts.name} exited`, pid: child.pid, code, signal })}\n`);
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

async function waitForUrl(name: string, child: ChildProcess): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error(`The ${name} did not start within ${START_TIMEOUT_MS / 1000} s.`)), START_TIMEOUT_MS);
    const fail = (err: Error) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(err);
    };
    child.on('message', (message: ServiceProcessMessage) => {
      if (message.type === 'failed') fail(new Error(`The ${name} failed to start: ${message.message}`));
      if (message.type === 'listening') {
        clearTimeout(timer);
        resolve(message.url);
      }
    });
    child.once('error', fail);
    child.once('exit', (code, signal) => fail(new Error(`The ${name} exited before it started (code ${code}, signal ${signal}).`)));
  });
}
