import { fork } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { bundleWorker } from '../local/bundle-worker.ts';
import type { MessagesRequest, ScriptedResponse } from '../local/scripted-model/script.ts';
import type { FromModel, ToModel } from './model-process.ts';

type WithoutId<T> = T extends unknown ? Omit<T, 'id'> : never;

const ENTRY = fileURLToPath(new URL('./model-process.ts', import.meta.url));

/** One exchange as this process's performance.now() reads it. */
export interface Exchange {
  main: boolean;
  receivedAt: number;
  respondedAt: number;
}

export interface ModelProcess {
  url: string;
  /** Queues main-loop responses; resolves once the server has them. */
  enqueue(responses: ScriptedResponse[]): Promise<void>;
  /** The last main-loop request; every exchange before the call has reached `onExchange` when it resolves. */
  lastMainRequest(): Promise<MessagesRequest | undefined>;
  close(): Promise<void>;
}

/** Starts the scripted model server in its own process (model-process.ts). */
export async function startModelProcess(onExchange: (exchange: Exchange) => void): Promise<ModelProcess> {
  const child = fork(await bundleWorker(ENTRY), [], { execArgv: [], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const waiting = new Map<number, (reply: Extract<FromModel, { type: 'reply' }>) => void>();
  let nextId = 0;
  const toHere = (epoch: number) => epoch - performance.timeOrigin;
  const url = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`The model process exited (${code}) before it was ready.`)));
    child.on('message', (message: FromModel) => {
      if (message.type === 'ready') resolve(message.url);
      else if (message.type === 'exchange')
        onExchange({ main: message.main, receivedAt: toHere(message.receivedAt), respondedAt: toHere(message.respondedAt) });
      else waiting.get(message.id)?.(message);
    });
  });
  const ask = (message: WithoutId<ToModel>) =>
    new Promise<Extract<FromModel, { type: 'reply' }>>((resolve) => {
      const id = nextId++;
      waiting.set(id, (reply) => {
        waiting.delete(id);
        resolve(reply);
      });
      child.send({ ...message, id } as ToModel);
    });
  return {
    url,
    enqueue: async (responses) => void (await ask({ type: 'enqueue', responses })),
    lastMainRequest: async () => (await ask({ type: 'last_main' })).lastMain,
    close: async () => {
      if (child.exitCode !== null) return;
      const exited = once(child, 'exit');
      child.disconnect();
      await exited;
    },
  };
}
