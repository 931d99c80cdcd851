/**
 * The child side of the benchmarks' model server (model-process-client.ts): the scripted model
 * server in a process of its own, so the harness measured never shares its event loop with the
 * model it talks to (Claude Code runs in its own process anyway; Stratus's local stack would
 * otherwise host the model's request parsing and streaming beside its own work).
 *
 * Main-loop requests (they carry the tools) get the queued responses in order, then "Done.";
 * side requests (titles, summaries) get "ok" without taking from the queue.
 */
import type { MessagesRequest, ScriptedResponse } from '../local/scripted-model/script.ts';
import { startScriptedModelServer } from '../local/scripted-model/server.ts';
import { isMainLoopRequest } from '../scripts/reference-claude.ts';
import { modelThinkMs } from './model-think.ts';

export type ToModel = { type: 'enqueue'; id: number; responses: ScriptedResponse[] } | { type: 'last_main'; id: number };
export type FromModel =
  | { type: 'ready'; url: string }
  | { type: 'exchange'; main: boolean; receivedAt: number; respondedAt: number }
  | { type: 'reply'; id: number; lastMain?: MessagesRequest };

const queue: ScriptedResponse[] = [];
let lastMain: MessagesRequest | undefined;
const send = (message: FromModel) => process.send?.(message);
/** Epoch milliseconds with performance.now()'s precision: comparable across processes. */
const epoch = (t: number) => performance.timeOrigin + t;

const thinkMs = modelThinkMs();

const model = await startScriptedModelServer({
  keepRequests: 1,
  brain: (request) =>
    isMainLoopRequest(request)
      ? { thinkMs, ...(queue.shift() ?? { content: [{ type: 'text', text: 'Done.' }] }) }
      : { content: [{ type: 'text', text: 'ok' }] },
  onExchange: ({ body, receivedAt, respondedAt }) => {
    const main = isMainLoopRequest(body);
    if (main) lastMain = body;
    send({ type: 'exchange', main, receivedAt: epoch(receivedAt), respondedAt: epoch(respondedAt) });
  },
});
process.on('message', (message: ToModel) => {
  if (message.type === 'enqueue') queue.push(...message.responses);
  // Replies follow every exchange sent before them on the same channel: a reply is also a flush.
  send({ type: 'reply', id: message.id, ...(message.type === 'last_main' ? { lastMain } : {}) });
});
process.on('disconnect', () => void model.close().then(() => process.exit(0)));
send({ type: 'ready', url: model.url });
