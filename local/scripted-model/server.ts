import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { closeServer, listenOnLoopback } from '../net/listen.ts';
import {
  bedrockBodyProblem,
  bedrockChunkFrame,
  bedrockException,
  bedrockExceptionFrame,
  bedrockRoute,
  startBedrockStream,
  withInvocationMetrics,
  writeBedrockError,
} from './bedrock-wire.ts';
import { firstUserText, isScriptedError, type Brain, type MessagesRequest, type ScriptedMessage, type ScriptedResponse } from './script.ts';

export interface ScriptedModelServer {
  url: string;
  /** Every Messages request body received (or the last `keepRequests`), raw and parsed, in order, with its credentials header. */
  requests: { raw: string; body: MessagesRequest; authorization?: string }[];
  /** Queue responses; while the queue is non-empty it wins over the brain. */
  enqueue(...responses: ScriptedResponse[]): void;
  /** Responses still queued. */
  remaining(): number;
  close(): Promise<void>;
}

export interface ScriptedModelOptions {
  brain?: Brain;
  port?: number;
  /**
   * How many received requests `requests` keeps, oldest dropped first. Default: all (tests
   * count and slice them); a long-running server should bound it, as each is kept twice (raw
   * and parsed, tens of KB with the tool definitions).
   */
  keepRequests?: number;
  /**
   * Called when a Messages response has been sent in full, with when its request arrived and
   * when the response ended (performance.now()): what a client's round-trip overhead is
   * measured from (bench/roundtrip.bench.ts).
   */
  onExchange?: (exchange: { body: MessagesRequest; receivedAt: number; respondedAt: number }) => void;
}

type ServerState = { queue: ScriptedResponse[]; requests: ScriptedModelServer['requests'] } & ScriptedModelOptions;

/**
 * A model server speaking the Anthropic Messages API, streaming included, byte-compatible with
 * what the real SDK parses: message_start, content_block_start / content_block_delta
 * (text_delta, input_json_delta) / content_block_stop, message_delta, message_stop. The same
 * server speaks Amazon Bedrock Runtime's InvokeModel(WithResponseStream) for the Bedrock SDK
 * (`POST /model/{id}/invoke-with-response-stream`, ./bedrock-wire.ts): the same events in
 * event-stream frames, errors as Bedrock's exceptions. Responses come from a queue (tests, parity
 * runs; an item with `forFirstText` only for the request it names) or, when none applies, from a brain. With neither, it answers 500 "script
 * exhausted" so a test that runs dry fails loudly. `POST /_script` (a JSON array) enqueues over
 * HTTP; `GET /_requests` returns what was received (a Bedrock request with its model id from
 * the path as `model`).
 */
export async function startScriptedModelServer(opts: ScriptedModelOptions = {}): Promise<ScriptedModelServer> {
  const state: ServerState = { queue: [], requests: [], ...opts };
  const server = createServer((req, res) => handle(req, res, state));
  const url = await listenOnLoopback(server, opts.port);
  return {
    url,
    requests: state.requests,
    enqueue: (...responses) => state.queue.push(...responses),
    remaining: () => state.queue.length,
    close: () => closeServer(server),
  };
}

/** One HTTP request: the scripting routes, token counting, or a Messages call. */
async function handle(req: IncomingMessage, res: ServerResponse, state: ServerState): Promise<void> {
  const receivedAt = performance.now();
  const url = new URL(req.url ?? '/', 'http://local');
  const raw = (await readBody(req)).toString('utf8');
  try {
    if (req.method === 'POST' && url.pathname === '/_script') {
      const items = JSON.parse(raw) as ScriptedResponse[];
      state.queue.push(...items);
      return json(res, 200, { queued: state.queue.length });
    }
    if (req.method === 'GET' && url.pathname === '/_requests')
      return json(
        res,
        200,
        state.requests.map((r) => r.body),
      );
    if (req.method === 'POST' && url.pathname === '/v1/messages/count_tokens') {
      return json(res, 200, { input_tokens: estimateTokens(raw) });
    }
    const bedrock = req.method === 'POST' ? bedrockRoute(url.pathname) : undefined;
    if (!bedrock && (req.method !== 'POST' || url.pathname !== '/v1/messages')) {
      return apiError(res, 404, 'not_found_error', `No route ${req.method} ${url.pathname}`);
    }
    const authorization = req.headers.authorization ?? (req.headers['x-api-key'] as string | undefined);
    const answered = await answerMessages(res, raw, state, { bedrock, authorization });
    if (answered) state.onExchange?.({ body: answered, receivedAt, respondedAt: performance.now() });
  } catch (err) {
    apiError(res, 400, 'invalid_request_error', `Scripted model server could not handle the request: ${String(err)}`);
  }
}

/** POST /v1/messages: the next queued response (else the brain's), streamed when asked; returns the request. */
async function answerMessages(
  res: ServerResponse,
  raw: string,
  state: { queue: ScriptedResponse[]; requests: ScriptedModelServer['requests']; brain?: Brain; keepRequests?: number },
  caller: { bedrock: ReturnType<typeof bedrockRoute>; authorization: string | undefined },
): Promise<MessagesRequest | undefined> {
  const { queue, requests, keepRequests } = state;
  const { bedrock } = caller;
  const parsed = JSON.parse(raw) as Record<string, unknown>;
  const problem = bedrock && bedrockBodyProblem(parsed);
  if (problem) {
    writeBedrockError(res, 400, 'ValidationException', problem);
    return undefined;
  }
  const body = (bedrock ? { ...parsed, model: bedrock.modelId, stream: bedrock.stream } : parsed) as MessagesRequest;
  requests.push({ raw, body, authorization: caller.authorization });
  if (keepRequests !== undefined && requests.length > keepRequests) requests.splice(0, requests.length - keepRequests);
  const first = firstUserText(body);
  const index = queue.findIndex((r) => r.forFirstText === undefined || first.startsWith(r.forFirstText));
  const next = (index >= 0 ? queue.splice(index, 1)[0] : undefined) ?? state.brain?.(body);
  const fail = (status: number, type: string, message: string) => {
    if (!bedrock) return apiError(res, status, type, message);
    const e = bedrockException(status, type);
    writeBedrockError(res, e.status, e.name, message);
  };
  if (!next) fail(500, 'api_error', 'Scripted model server: script exhausted (no response queued).');
  else if (isScriptedError(next)) fail(next.error.status, next.error.type, next.error.message);
  else {
    const message = buildMessage(body, next, estimateTokens(raw));
    if (body.stream) await streamMessage(res, message, next, bedrock ? 'bedrock' : 'anthropic');
    else json(res, 200, { ...message, content: message.content.map((block) => ('rawJson' in block ? { ...block, rawJson: undefined } : block)) });
  }
  return body;
}

interface WireMessage {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: WireBlock[];
  stop_reason: string;
  stop_sequence: null;
  usage: {
    input_tokens: number;
    output_tokens: number;
    cache_creation_input_tokens: number;
    cache_read_input_tokens: number;
    /** Searches the provider ran, as the API reports them (only when there were some). */
    server_tool_use?: { web_search_requests: number };
  };
}

type WireBlock =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: unknown; rawJson?: string }
  | { type: 'server_tool_use'; id: string; name: string; input: unknown }
  | { type: 'web_search_tool_result'; tool_use_id: string; content: unknown };

function wireBlock(block: ScriptedMessage['content'][number]): WireBlock {
  if (block.type !== 'tool_use') return block;
  return {
    type: 'tool_use',
    id: block.id ?? `toolu_${randomBytes(12).toString('hex')}`,
    name: block.name,
    input: block.input,
    ...(block.rawJson !== undefined ? { rawJson: block.rawJson } : {}),
  };
}

function buildMessage(request: MessagesRequest, scripted: ScriptedMessage, inputTokens: number): WireMessage {
  const content = scripted.content.map(wireBlock);
  const searches = content.filter((b) => b.type === 'server_tool_use' && b.name === 'web_search').length;
  const outputTokens = scripted.usage?.output_tokens ?? Math.max(1, Math.ceil(JSON.stringify(content).length / 4));
  return {
    id: `msg_${randomBytes(12).toString('hex')}`,
    type: 'message',
    role: 'assistant',
    model: request.model,
    content,
    stop_reason: scripted.stopReason ?? (content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn'),
    stop_sequence: null,
    usage: {
      input_tokens: scripted.usage?.input_tokens ?? inputTokens,
      output_tokens: outputTokens,
      cache_creation_input_tokens: scripted.usage?.cache_creation_input_tokens ?? 0,
      cache_read_input_tokens: scripted.usage?.cache_read_input_tokens ?? 0,
      ...(searches > 0 ? { server_tool_use: { web_search_requests: searches } } : {}),
    },
  };
}

async function streamMessage(res: ServerResponse, message: WireMessage, scripted: ScriptedMessage, wire: 'anthropic' | 'bedrock'): Promise<void> {
  const events: [string, unknown][] = [];
  events.push([
    'message_start',
    { type: 'message_start', message: { ...message, content: [], stop_reason: null, usage: { ...message.usage, output_tokens: 1 } } },
  ]);
  message.content.forEach((block, index) => {
    events.push(...blockEvents(block, index));
    events.push(['content_block_stop', { type: 'content_block_stop', index }]);
  });
  const { output_tokens, server_tool_use } = message.usage;
  events.push([
    'message_delta',
    {
      type: 'message_delta',
      delta: { stop_reason: message.stop_reason, stop_sequence: null },
      usage: { output_tokens, ...(server_tool_use ? { server_tool_use } : {}) },
    },
  ]);
  events.push(['message_stop', { type: 'message_stop' }]);

  if (scripted.thinkMs) await new Promise((r) => setTimeout(r, scripted.thinkMs));
  const startedAt = Date.now();
  if (wire === 'bedrock') startBedrockStream(res);
  else res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'request-id': `req_${randomBytes(8).toString('hex')}` });
  for (const [i, [event, data]] of events.entries()) {
    if (scripted.breakAfterEvents !== undefined && i >= scripted.breakAfterEvents) {
      res.socket?.destroy();
      return;
    }
    const failure = scripted.errorAfterEvents;
    if (failure && i >= failure.after) {
      if (wire === 'bedrock') res.write(bedrockExceptionFrame(bedrockException(failure.status, failure.type).name, failure.message));
      else res.write(`event: error\ndata: ${JSON.stringify({ type: 'error', error: { type: failure.type, message: failure.message } })}\n\n`);
      res.end();
      return;
    }
    if (wire === 'bedrock') res.write(bedrockChunkFrame(withInvocationMetrics(data as { type: string }, message.usage, startedAt)));
    else res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    if (scripted.delayMs) await new Promise((r) => setTimeout(r, scripted.delayMs));
  }
  res.end();
}

/** A block's start and deltas as the API streams them: text in pieces, a (server) tool's input as JSON pieces, a search result whole. */
function blockEvents(block: WireBlock, index: number): [string, unknown][] {
  const start = (content_block: unknown): [string, unknown] => ['content_block_start', { type: 'content_block_start', index, content_block }];
  const delta = (d: unknown): [string, unknown] => ['content_block_delta', { type: 'content_block_delta', index, delta: d }];
  switch (block.type) {
    case 'text':
      return [start({ type: 'text', text: '' }), ...chunk(block.text, 24).map((text) => delta({ type: 'text_delta', text }))];
    case 'tool_use':
    case 'server_tool_use': {
      const json = block.type === 'tool_use' ? (block.rawJson ?? JSON.stringify(block.input)) : JSON.stringify(block.input);
      return [
        start({ type: block.type, id: block.id, name: block.name, input: {} }),
        ...chunk(json, 32).map((partial_json) => delta({ type: 'input_json_delta', partial_json })),
      ];
    }
    case 'web_search_tool_result':
      return [start(block)];
  }
}

function chunk(text: string, size: number): string[] {
  if (text.length === 0) return [''];
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

function estimateTokens(raw: string): number {
  return Math.max(1, Math.ceil(raw.length / 4));
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function apiError(res: ServerResponse, status: number, type: string, message: string): void {
  json(res, status, { type: 'error', error: { type, message } });
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}
